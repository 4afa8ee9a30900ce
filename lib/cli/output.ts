/** Writes one line to stdout. */
export function println(line = ""): void {
  Deno.stdout.writeSync(new TextEncoder().encode(line + "\n"));
}

/**
 * Writes a value as one line of JSON to stdout, its keys in snake_case: every command's
 * `--json` uses that one naming style (times are UTC, ISO 8601 or epoch ms as documented).
 */
export function printJson(value: unknown): void {
  println(JSON.stringify(snakeCaseKeys(value)));
}

/** A camelCase identifier (`ackedSequence`); keys that are data (paths) do not look like one. */
const CAMEL_KEY = /^[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+$/;

/**
 * The value with every camelCase object key turned into snake_case (`ackedSequence` →
 * `acked_sequence`), deeply. Keys that are not identifiers (paths, ids) are left alone.
 *
 * @param value Any JSON value.
 * @returns The converted copy.
 */
export function snakeCaseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeCaseKeys);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    const name = CAMEL_KEY.test(key) ? key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) : key;
    out[name] = snakeCaseKeys(item);
  }
  return out;
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, "0");
}

/** Formats epoch milliseconds as a local time for people: `2026-11-24 13:05:09`. */
export function formatTime(epochMs: number): string {
  const d = new Date(epochMs);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${
    pad(d.getMinutes())
  }:${pad(d.getSeconds())}`;
}

/** Formats a duration for people: `3d 4h`, `5m 3s`, `42s`. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const [d, h, m] = [Math.floor(s / 86400), Math.floor(s / 3600) % 24, Math.floor(s / 60) % 60];
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${m}m`;
  if (m > 0) return `${m}m ${s % 60}s`;
  return `${s}s`;
}

/**
 * Formats a byte count for people in binary units: `512 bytes`, `64 MiB` (exact), `63.9 MiB`
 * (rounded to one decimal; keep exact bytes for machines).
 *
 * @param size A number of bytes.
 * @returns The size with its unit.
 */
export function formatBytes(size: number): string {
  if (!Number.isFinite(size) || Math.abs(size) < 1024) {
    return `${size} ${size === 1 ? "byte" : "bytes"}`;
  }
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = size / 1024;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  const shown = Number.isInteger(value) ? String(value) : value.toFixed(1);
  return `${shown} ${units[unit]}`;
}

/**
 * A message with its byte counts made readable (`70000000 bytes` → `66.8 MiB`, `limit of
 * 67043323` → `limit of 63.9 MiB`), for showing stored reasons to people; `--json` keeps
 * the text as stored.
 *
 * @param text A message, e.g. a refused write-back's reason.
 * @returns The message for people.
 */
export function sizesForPeople(text: string): string {
  return text
    .replace(/\b(\d{4,}) bytes\b/g, (_, n: string) => formatBytes(Number(n)))
    .replace(
      /\b(limit of) (\d{4,})\b/g,
      (_, words: string, n: string) => `${words} ${formatBytes(Number(n))}`,
    );
}

/** Formats a mode's permission bits as octal (e.g. `644`). */
export function formatMode(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(3, "0");
}

/**
 * Pads columns of rows to equal widths; with a header, it comes first (column names in
 * capitals, like `ps`).
 */
export function table(rows: string[][], header?: readonly string[]): string[] {
  const all = header ? [[...header], ...rows] : rows;
  const widths: number[] = [];
  for (const row of all) {
    row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  }
  return all.map((row) =>
    row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ")
  );
}
