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
 * A value that only goes up, such as iterations recorded; one series per combination of
 * label values.
 *
 * @example Counting write-backs by result
 * ```ts
 * import { strictEqual } from "node:assert/strict";
 * import { Counter } from "./counter.ts";
 * const writebacks = new Counter({ name: "wb_total", help: "Write-backs", labelNames: ["result"] });
 * writebacks.inc({ result: "accepted" });
 * writebacks.inc({ result: "accepted" }, 2);
 * strictEqual(writebacks.get({ result: "accepted" }), 3);
 * ```
 */
export class Counter<L extends string = never> implements Metric {
  readonly name: string;
  readonly help: string;
  readonly type = "counter" as const;
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
   * Adds to the series with these labels (none for an unlabelled counter).
   *
   * @param labels Every label of the metric, as strings.
   * @param value How much to add. @default {1}
   * @throws {TypeError} For missing, extra or non-string labels.
   * @throws {RangeError} For a negative or non-finite amount.
   */
  inc(value?: number): void;
  inc(labels: Labels<L>, value?: number): void;
  inc(first?: Labels<L> | number, second?: number): void {
    const { labels, value } = splitArgs(first, second, 1);
    if (value === undefined || !Number.isFinite(value) || value < 0) {
      throw new RangeError(`Counter "${this.name}" can only grow, got ${value}`);
    }
    this.#entry(labels).value += value;
  }

  /**
   * @param labels The series' labels (none for an unlabelled counter).
   * @returns The series' value, 0 when it has none yet.
   */
  get(labels: Labels<L> | Record<string, never> = {}): number {
    const values = labelValues(this.name, this.labelNames, labels);
    return this.#series.get(seriesKey(values))?.value ?? 0;
  }

  /** Forgets one series, e.g. of a replica that is gone. */
  remove(labels: Labels<L>): void {
    this.#series.delete(seriesKey(labelValues(this.name, this.labelNames, labels)));
  }

  /** Forgets every series; an unlabelled counter goes back to 0. */
  reset(): void {
    this.#series.clear();
    if (this.labelNames.length === 0) this.#series.set(seriesKey([]), { values: [], value: 0 });
  }

  /** @returns HELP, TYPE and one sample line per series. */
  render(): string {
    let text = `# HELP ${this.name} ${escapeHelp(this.help)}\n# TYPE ${this.name} counter\n`;
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
