import type { Metric, MetricOptions, MetricType } from "./metric.ts";
import { checkNames, escapeHelp, type Labels, labelValues, seriesKey } from "./_series.ts";

/**
 * What every metric shares: a name, help text, label names, and one series per
 * combination of label values, looked up and forgotten the same way. Subclasses say what a
 * series holds ({@linkcode newSeries}) and how it renders, and call {@linkcode reset} at the
 * end of their constructor, once a new series can be made.
 */
export abstract class SeriesMetric<L extends string, S extends { values: string[] }>
  implements Metric {
  readonly name: string;
  readonly help: string;
  abstract readonly type: MetricType;
  readonly labelNames: readonly L[];
  readonly #series = new Map<string, S>();

  /**
   * Checks and keeps the metric's name, help and label names.
   *
   * @param options Name, help and label names.
   * @param reservedLabels Label names the metric's own output uses.
   * @throws {TypeError} For an invalid metric or label name.
   */
  constructor(options: MetricOptions<L>, reservedLabels: string[] = []) {
    this.name = options.name;
    this.help = options.help;
    this.labelNames = [...(options.labelNames ?? [])];
    checkNames(this.name, this.labelNames, reservedLabels);
  }

  /**
   * The exposition text of every series.
   *
   * @returns The `# HELP`, `# TYPE` and sample lines, each ending in a newline.
   */
  abstract render(): string;

  /** Forgets one series, e.g. of a replica that is gone. */
  remove(labels: Labels<L>): void {
    this.#series.delete(seriesKey(labelValues(this.name, this.labelNames, labels)));
  }

  /** Forgets every series; an unlabelled metric goes back to an empty one. */
  reset(): void {
    this.#series.clear();
    if (this.labelNames.length === 0) this.#series.set(seriesKey([]), this.newSeries([]));
  }

  /** A series for these label values that holds nothing yet. */
  protected abstract newSeries(values: string[]): S;

  /** The `# HELP` and `# TYPE` lines. */
  protected header(): string {
    return `# HELP ${this.name} ${escapeHelp(this.help)}\n# TYPE ${this.name} ${this.type}\n`;
  }

  /** Every series, in the order they were first used. */
  protected allSeries(): IterableIterator<S> {
    return this.#series.values();
  }

  /** The series for these labels, or an empty one (not kept) when it has none yet. */
  protected lookup(labels: Record<string, unknown>): S {
    const values = labelValues(this.name, this.labelNames, labels);
    return this.#series.get(seriesKey(values)) ?? this.newSeries(values);
  }

  /** The series for these labels, created empty on first use. */
  protected entry(labels: Record<string, unknown>): S {
    const values = labelValues(this.name, this.labelNames, labels);
    const key = seriesKey(values);
    let series = this.#series.get(key);
    if (!series) this.#series.set(key, series = this.newSeries(values));
    return series;
  }
}
