import type { MetricOptions } from "./metric.ts";
import { formatLabels, formatValue, type Labels } from "./_series.ts";
import { SeriesMetric } from "./_series_metric.ts";

/** One labelled series of a single-valued metric. */
export interface ValueSeries {
  /** Label values, in label-name order. */
  values: string[];
  /** The series' number. */
  value: number;
}

/**
 * What counters and gauges share: one number per combination of label values, rendered
 * the same way. Subclasses decide how the number may change.
 */
export abstract class ValueMetric<L extends string> extends SeriesMetric<L, ValueSeries> {
  /** Counter or gauge. */
  abstract override readonly type: "counter" | "gauge";

  /**
   * Makes the metric with no series yet (an unlabelled one starts at 0).
   *
   * @param options Name, help and label names.
   * @throws {TypeError} For an invalid metric or label name.
   */
  constructor(options: MetricOptions<L>) {
    super(options);
    this.reset();
  }

  /**
   * The series' value, 0 when it has none yet.
   *
   * @returns The series' value, 0 when it has none yet.
   */
  get(labels: Labels<L> | Record<string, never> = {}): number {
    return this.lookup(labels).value;
  }

  /**
   * The exposition text of every series.
   *
   * @returns HELP, TYPE and one sample line per series.
   */
  render(): string {
    let text = this.header();
    for (const { values, value } of this.allSeries()) {
      text += `${this.name}${formatLabels(this.labelNames, values)} ${formatValue(value)}\n`;
    }
    return text;
  }

  /** An empty series for these label values. */
  protected newSeries(values: string[]): ValueSeries {
    return { values, value: 0 };
  }
}
