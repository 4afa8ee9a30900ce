/**
 * Byte counts for people, in messages and reasons that people read.
 *
 * @module
 */

/**
 * Formats a byte count for people in binary units: `512 bytes`, `64 MiB` (exact), `63.9 MiB`
 * (rounded to one decimal; keep exact bytes for machines, see {@linkcode bytesForPeople}).
 *
 * @param size A number of bytes.
 * @returns The size with its unit.
 * @example
 * ```ts
 * import { formatBytes } from "./format_bytes.ts";
 * formatBytes(64 * 1024 * 1024); // "64 MiB"
 * ```
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
 * A byte count for a stored reason that people read and programs may parse: readable, with
 * the exact count beside it when the readable one is not exact (`66.8 MiB (70000000 bytes)`,
 * `64 MiB`, `512 bytes`).
 *
 * @param size A number of bytes.
 * @returns The size for people, exact.
 * @example
 * ```ts
 * import { bytesForPeople } from "./format_bytes.ts";
 * bytesForPeople(70_000_000); // "66.8 MiB (70000000 bytes)"
 * ```
 */
export function bytesForPeople(size: number): string {
  const readable = formatBytes(size);
  return /^-?\d+ (?:KiB|MiB|GiB|TiB)$/.test(readable) || Math.abs(size) < 1024
    ? readable
    : `${readable} (${size} bytes)`;
}
