/**
 * Timing helpers: wall-clock milliseconds of a call, and percentiles of samples.
 *
 * @module
 */

/**
 * Times one call.
 *
 * @param fn The work; awaited when it returns a promise.
 * @returns Milliseconds it took.
 */
export async function timeMs(fn: () => unknown): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/** A summary of latency samples, in milliseconds. */
export interface LatencySummary {
  /** How many samples. */
  count: number;
  /** Median. */
  p50: number;
  /** 99th percentile. */
  p99: number;
  /** Smallest sample. */
  min: number;
  /** Largest sample. */
  max: number;
  /** Arithmetic mean. */
  mean: number;
}

/**
 * The `p`-th percentile of `samples` by the nearest-rank method: the smallest sample such
 * that at least `p` percent of the samples are at or below it.
 *
 * @param samples At least one number, in any order (not modified).
 * @param p A percentage in `(0, 100]`.
 * @returns One of the samples.
 * @throws {RangeError} When `samples` is empty or `p` is out of range.
 *
 * @example Median and p99 of ten samples
 * ```ts
 * import { percentile } from "./timing.ts";
 * const samples = [5, 1, 4, 2, 3, 6, 7, 8, 9, 10];
 * if (percentile(samples, 50) !== 5) throw new Error("wrong median");
 * if (percentile(samples, 99) !== 10) throw new Error("wrong p99");
 * ```
 */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) throw new RangeError("Cannot take a percentile of no samples");
  if (!(p > 0 && p <= 100)) throw new RangeError(`Percentile "${p}" is not in (0, 100]`);
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.max(0, rank - 1)]!;
}

/**
 * Summarizes latency samples.
 *
 * @param samples At least one sample, in milliseconds.
 * @returns Count, p50, p99, min, max and mean.
 * @throws {RangeError} When `samples` is empty.
 */
export function summarize(samples: readonly number[]): LatencySummary {
  if (samples.length === 0) throw new RangeError("Cannot summarize no samples");
  let sum = 0;
  for (const sample of samples) sum += sample;
  return {
    count: samples.length,
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
    min: Math.min(...samples),
    max: Math.max(...samples),
    mean: sum / samples.length,
  };
}
