import type { MetricOptions } from "./metric.ts";
import { formatLabels, formatValue, type Labels } from "./_series.ts";
import { SeriesMetric } from "./_series_metric.ts";

/** One labelled series of a single-valued metric. */
export interface ValueSeries {
  values: string[];
  value: number;
}

/**
 * What counters and gauges share: one number per combination of label values, rendered
 * the same way. Subclasses decide how the number may change.
 */
export abstract class ValueMetric<L extends string> extends SeriesMetric<L, ValueSeries> {
  abstract override readonly type: "counter" | "gauge";

  /**
   * @param options Name, help and label names.
   * @throws {TypeError} For an invalid metric or label name.
   */
  constructor(options: MetricOptions<L>) {
    super(options);
    this.reset();
  }

  /** @returns The series' value, 0 when it has none yet. */
  get(labels: Labels<L> | Record<string, never> = {}): number {
    return this.lookup(labels).value;
  }

  /** @returns HELP, TYPE and one sample line per series. */
  render(): string {
    let text = this.header();
    for (const { values, value } of this.allSeries()) {
      text += `${this.name}${formatLabels(this.labelNames, values)} ${formatValue(value)}\n`;
    }
    return text;
  }

  protected newSeries(values: string[]): ValueSeries {
    return { values, value: 0 };
  }
}
