import type { Metric, MetricOptions } from "./metric.ts";
import {
  checkNames,
  escapeHelp,
  formatLabels,
  formatValue,
  type Labels,
  labelValues,
  seriesKey,
} from "./_series.ts";

/** One labelled series of a single-valued metric. */
export interface ValueSeries {
  values: string[];
  value: number;
}

/**
 * What counters and gauges share: one number per combination of label values, looked up,
 * forgotten and rendered the same way. Subclasses decide how the number may change.
 */
export abstract class ValueMetric<L extends string> implements Metric {
  readonly name: string;
  readonly help: string;
  abstract readonly type: "counter" | "gauge";
  readonly labelNames: readonly L[];
  readonly #series = new Map<string, ValueSeries>();

  /**
   * @param options Name, help and label names.
   * @throws {TypeError} For an invalid metric or label name.
   */
  constructor(options: MetricOptions<L>) {
    this.name = options.name;
    this.help = options.help;
    this.labelNames = [...(options.labelNames ?? [])];
    checkNames(this.name, this.labelNames);
    this.reset();
  }

  /** @returns The series' value, 0 when it has none yet. */
  get(labels: Labels<L> | Record<string, never> = {}): number {
    const values = labelValues(this.name, this.labelNames, labels);
    return this.#series.get(seriesKey(values))?.value ?? 0;
  }

  /** Forgets one series, e.g. of a replica that is gone. */
  remove(labels: Labels<L>): void {
    this.#series.delete(seriesKey(labelValues(this.name, this.labelNames, labels)));
  }

  /** Forgets every series; an unlabelled metric goes back to 0. */
  reset(): void {
    this.#series.clear();
    if (this.labelNames.length === 0) this.#series.set(seriesKey([]), { values: [], value: 0 });
  }

  /** @returns HELP, TYPE and one sample line per series. */
  render(): string {
    let text = `# HELP ${this.name} ${escapeHelp(this.help)}\n# TYPE ${this.name} ${this.type}\n`;
    for (const { values, value } of this.#series.values()) {
      text += `${this.name}${formatLabels(this.labelNames, values)} ${formatValue(value)}\n`;
    }
    return text;
  }

  /** The series for these labels, created at 0 on first use. */
  protected entry(labels: Record<string, unknown>): ValueSeries {
    const values = labelValues(this.name, this.labelNames, labels);
    const key = seriesKey(values);
    let entry = this.#series.get(key);
    if (!entry) this.#series.set(key, entry = { values, value: 0 });
    return entry;
  }
}
