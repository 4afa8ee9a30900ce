/** A moment to restore to: a store sequence, or a time (epoch milliseconds). */
export type RestorePoint = { sequence: number } | { timestamp: number };

const RELATIVE = /^(\d+)\s*(s|m|h|d|w)(?:\s+ago)?$/i;
const UNIT_MS: Record<string, number> = {
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/**
 * Reads the argument of `restore --to`: a whole number is a store sequence; an ISO 8601
 * date or time (`2024-05-01`, `2024-05-01T12:00:00Z`) or a duration ago (`90s`, `10m`,
 * `2h`, `1d`, `1w`, optionally followed by `ago`) is a time. Pure.
 *
 * @param text The argument.
 * @param now Epoch milliseconds now, for durations.
 * @returns The point.
 * @throws {SyntaxError} When the text is none of these.
 *
 * @example
 * ```ts
 * import { parseRestorePoint } from "./restore_point.ts";
 * const point = parseRestorePoint("10m ago", 3_600_000);
 * if (!("timestamp" in point) || point.timestamp !== 3_000_000) throw new Error("wrong");
 * ```
 */
export function parseRestorePoint(text: string, now: number): RestorePoint {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) {
    const sequence = Number(trimmed);
    if (Number.isSafeInteger(sequence)) return { sequence };
  }
  const relative = RELATIVE.exec(trimmed);
  if (relative) {
    return { timestamp: now - Number(relative[1]) * UNIT_MS[relative[2]!.toLowerCase()]! };
  }
  if (/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(trimmed)) {
    const timestamp = Date.parse(trimmed);
    if (!Number.isNaN(timestamp)) return { timestamp };
  }
  throw new SyntaxError(
    `Cannot read "${text}" as a sequence number, a date-time (2024-05-01T12:00:00Z) or a time ago (10m, 2h, 1d)`,
  );
}
