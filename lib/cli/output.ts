/** Byte counts for people: defined beside the messages that use them (`lib/log`). */
export { formatBytes } from "../log/mod.ts";

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
