import type { MetricOptions } from "./metric.ts";
import { formatLabels, formatValue, type Labels, splitArgs } from "./_series.ts";
import { SeriesMetric } from "./_series_metric.ts";

/** Bucket bounds in seconds suited to a content fetch, from 1 ms to 10 s. */
export const LATENCY_BUCKETS: readonly number[] = [
  0.001,
  0.0025,
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
  5,
  10,
];

/** Options for a {@linkcode Histogram}. */
export interface HistogramOptions<L extends string> extends MetricOptions<L> {
  /** Upper bounds, strictly increasing and finite; `+Inf` is added. @default {LATENCY_BUCKETS} */
  buckets?: readonly number[];
}

/** What one histogram series holds. */
export interface HistogramSnapshot {
  /** Observations at or below each bound (cumulative), `+Inf` last. */
  buckets: { le: number; count: number }[];
  /** Sum of every observation. */
  sum: number;
  /** How many observations there were. */
  count: number;
}

/** One labelled series of a histogram, as kept between renders. */
export interface HistogramSeries {
  /** Label values, in label-name order. */
  values: string[];
  /** Observations per bucket (not cumulative), `+Inf` last. */
  counts: number[];
  /** Sum of every observation. */
  sum: number;
  /** How many observations there were. */
  count: number;
}

/**
 * Observations sorted into cumulative buckets, with their sum and count, such as fetch
 * latency in seconds.
 *
 * @example Timing a fetch
 * ```ts
 * import { strictEqual } from "node:assert/strict";
 * import { Histogram } from "./histogram.ts";
 * const latency = new Histogram({ name: "fetch_seconds", help: "Fetch time", buckets: [0.1, 1] });
 * latency.observe(0.05);
 * latency.observe(2);
 * strictEqual(latency.get().count, 2);
 * strictEqual(latency.get().buckets[0]?.count, 1);
 * ```
 */
export class Histogram<L extends string = never> extends SeriesMetric<L, HistogramSeries> {
  /** Always `histogram`. */
  readonly type = "histogram" as const;
  /** Finite upper bounds, in order. */
  readonly buckets: readonly number[];

  /**
   * Makes a histogram with these bucket bounds.
   *
   * @param options Name, help, label names and bucket bounds.
   * @throws {TypeError} For an invalid name, a label named `le`, or bad buckets.
   */
  constructor(options: HistogramOptions<L>) {
    super(options, ["le"]);
    const buckets = [...(options.buckets ?? LATENCY_BUCKETS)];
    if (buckets.length === 0) {
      throw new TypeError(`Histogram "${this.name}" needs at least one bucket`);
    }
    buckets.forEach((bound, index) => {
      if (!Number.isFinite(bound) || (index > 0 && bound <= buckets[index - 1]!)) {
        throw new TypeError(`Buckets of histogram "${this.name}" must be finite and increasing`);
      }
    });
    this.buckets = buckets;
    this.reset();
  }

  /**
   * Records one observation in the series with these labels.
   *
   * @throws {TypeError} For missing, extra or non-string labels.
   * @throws {RangeError} For NaN.
   */
  observe(value: number): void;
  /** Records one observation in the series with these labels. */
  observe(labels: Labels<L>, value: number): void;
  observe(first: Labels<L> | number, second?: number): void {
    const { labels, value } = splitArgs(first, second, undefined);
    if (typeof value !== "number" || Number.isNaN(value)) {
      throw new RangeError(`Histogram "${this.name}" needs a number, got ${value}`);
    }
    const series = this.entry(labels);
    const index = this.buckets.findIndex((bound) => value <= bound);
    series.counts[index === -1 ? this.buckets.length : index]! += 1;
    series.sum += value;
    series.count += 1;
  }

  /**
   * Starts timing; call the returned function when done to observe the elapsed seconds.
   *
   * @returns A function that observes and returns the seconds elapsed.
   */
  startTimer(labels?: Labels<L>): () => number {
    const start = performance.now();
    return () => {
      const seconds = (performance.now() - start) / 1000;
      if (labels === undefined) this.observe(seconds);
      else this.observe(labels, seconds);
      return seconds;
    };
  }

  /**
   * The cumulative buckets, sum and count of one series.
   *
   * @returns The series' cumulative buckets, sum and count (zeros when it has none yet).
   */
  get(labels: Labels<L> | Record<string, never> = {}): HistogramSnapshot {
    const series = this.lookup(labels);
    return {
      buckets: this.#cumulative(series).map((count, index) => ({
        le: this.buckets[index] ?? Infinity,
        count,
      })),
      sum: series.sum,
      count: series.count,
    };
  }

  /**
   * The exposition text of every series.
   *
   * @returns HELP, TYPE, and per series its `_bucket` lines, `_sum` and `_count`.
   */
  render(): string {
    let text = this.header();
    const names = [...this.labelNames, "le"];
    for (const series of this.allSeries()) {
      const cumulative = this.#cumulative(series);
      cumulative.forEach((count, index) => {
        const le = formatValue(this.buckets[index] ?? Infinity);
        text += `${this.name}_bucket${formatLabels(names, [...series.values, le])} ${count}\n`;
      });
      const labels = formatLabels(this.labelNames, series.values);
      text += `${this.name}_sum${labels} ${formatValue(series.sum)}\n`;
      text += `${this.name}_count${labels} ${series.count}\n`;
    }
    return text;
  }

  #cumulative(series: HistogramSeries): number[] {
    let running = 0;
    return series.counts.map((count) => running += count);
  }

  /** An empty series for these label values. */
  protected newSeries(values: string[]): HistogramSeries {
    return { values, counts: new Array(this.buckets.length + 1).fill(0), sum: 0, count: 0 };
  }
}
