import type { Metric, MetricOptions } from "./metric.ts";
import {
  checkNames,
  escapeHelp,
  formatLabels,
  formatValue,
  type Labels,
  labelValues,
  seriesKey,
  splitArgs,
} from "./_series.ts";

/**
 * A value that goes up and down, such as connected replicas; one series per combination
 * of label values.
 *
 * @example A replica's lag
 * ```ts
 * import { strictEqual } from "node:assert/strict";
 * import { Gauge } from "./gauge.ts";
 * const lag = new Gauge({ name: "lag", help: "Lag", labelNames: ["sandbox_id"] });
 * lag.set({ sandbox_id: "a" }, 4);
 * lag.dec({ sandbox_id: "a" });
 * strictEqual(lag.get({ sandbox_id: "a" }), 3);
 * ```
 */
export class Gauge<L extends string = never> implements Metric {
  readonly name: string;
  readonly help: string;
  readonly type = "gauge" as const;
  readonly labelNames: readonly L[];
  #series = new Map<string, { values: string[]; value: number }>();

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

  /**
   * Sets the series with these labels.
   *
   * @throws {TypeError} For missing, extra or non-string labels, or a missing value.
   */
  set(value: number): void;
  set(labels: Labels<L>, value: number): void;
  set(first: Labels<L> | number, second?: number): void {
    const { labels, value } = splitArgs(first, second, undefined);
    if (typeof value !== "number") throw new TypeError(`Gauge "${this.name}" needs a number`);
    this.#entry(labels).value = value;
  }

  /** Adds to the series (1 unless given). */
  inc(value?: number): void;
  inc(labels: Labels<L>, value?: number): void;
  inc(first?: Labels<L> | number, second?: number): void {
    const { labels, value } = splitArgs(first, second, 1);
    this.#entry(labels).value += value ?? 1;
  }

  /** Subtracts from the series (1 unless given). */
  dec(value?: number): void;
  dec(labels: Labels<L>, value?: number): void;
  dec(first?: Labels<L> | number, second?: number): void {
    const { labels, value } = splitArgs(first, second, 1);
    this.#entry(labels).value -= value ?? 1;
  }

  /** @returns The series' value, 0 when it has none yet. */
  get(labels: Labels<L> | Record<string, never> = {}): number {
    const values = labelValues(this.name, this.labelNames, labels);
    return this.#series.get(seriesKey(values))?.value ?? 0;
  }

  /** Forgets one series, e.g. of a replica that disconnected. */
  remove(labels: Labels<L>): void {
    this.#series.delete(seriesKey(labelValues(this.name, this.labelNames, labels)));
  }

  /** Forgets every series; an unlabelled gauge goes back to 0. */
  reset(): void {
    this.#series.clear();
    if (this.labelNames.length === 0) this.#series.set(seriesKey([]), { values: [], value: 0 });
  }

  /** @returns HELP, TYPE and one sample line per series. */
  render(): string {
    let text = `# HELP ${this.name} ${escapeHelp(this.help)}\n# TYPE ${this.name} gauge\n`;
    for (const { values, value } of this.#series.values()) {
      text += `${this.name}${formatLabels(this.labelNames, values)} ${formatValue(value)}\n`;
    }
    return text;
  }

  #entry(labels: Record<string, unknown>): { values: string[]; value: number } {
    const values = labelValues(this.name, this.labelNames, labels);
    const key = seriesKey(values);
    let entry = this.#series.get(key);
    if (!entry) this.#series.set(key, entry = { values, value: 0 });
    return entry;
  }
}
