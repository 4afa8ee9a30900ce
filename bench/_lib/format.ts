/**
 * Number formatting for benchmark lines, and the ratio against a peer tool.
 *
 * @module
 */

/** Bytes in a kibibyte. */
export const KiB = 1024;
/** Bytes in a mebibyte. */
export const MiB = 1024 * KiB;

/**
 * Formats a number with thousands separators and a fixed number of decimals.
 *
 * @param value The number.
 * @param digits Decimals. @default {0}
 * @returns E.g. `"12,345"` or `"3.14"`.
 */
export function formatNumber(value: number, digits = 0): string {
  return value.toLocaleString("en-US", {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  });
}

/**
 * Formats a byte count in MiB.
 *
 * @param bytes The count.
 * @param digits Decimals. @default {1}
 * @returns E.g. `"10.0 MiB"`.
 */
export function formatMiB(bytes: number, digits = 1): string {
  return `${formatNumber(bytes / MiB, digits)} MiB`;
}

/**
 * Says how many times faster Chronicle is than a peer, from two rates (higher is better).
 *
 * @param ours Chronicle's rate (ops/s, files/s, MB/s).
 * @param theirs The peer's rate in the same unit, measured in the same run.
 * @param peer The peer's name, as printed.
 * @returns E.g. `"52.3x git's rate"`; a value under 1 means Chronicle is slower.
 *
 * @example
 * ```ts
 * import { rateRatio } from "./format.ts";
 * if (rateRatio(300, 100, "git") !== "3.00x git's rate") throw new Error("wrong ratio");
 * ```
 */
export function rateRatio(ours: number, theirs: number, peer: string): string {
  return `${formatNumber(ours / theirs, 2)}x ${peer}'s rate`;
}

/**
 * Says what fraction of a peer's size Chronicle uses (lower is better).
 *
 * @param ours Chronicle's bytes.
 * @param theirs The peer's bytes for the same data.
 * @param peer The peer's name, as printed.
 * @returns E.g. `"1.2% of 100 copies (81.6x smaller)"`.
 */
export function sizeRatio(ours: number, theirs: number, peer: string): string {
  return `${formatNumber((ours / theirs) * 100, 1)}% of ${peer} (${
    formatNumber(theirs / ours, 1)
  }x smaller)`;
}
