/** The metric types Chronicle exposes. */
export type MetricType = "counter" | "gauge" | "histogram";

/** Label values of one series, by label name. */
export type { Labels } from "./_series.ts";

/** What every metric shares: a name, help text, a type, and its exposition text. */
export interface Metric {
  /** Metric name, e.g. `chronicle_iterations_total`. */
  readonly name: string;
  /** One line saying what the metric counts. */
  readonly help: string;
  /** Counter, gauge or histogram, as `# TYPE` names it. */
  readonly type: MetricType;
  /** Label names every series of this metric carries, in output order. */
  readonly labelNames: readonly string[];
  /** The `# HELP`, `# TYPE` and sample lines, each ending in a newline. */
  render(): string;
  /** Forgets every series (labelled metrics) or returns to zero (unlabelled ones). */
  reset(): void;
}

/** Options shared by every metric. */
export interface MetricOptions<L extends string> {
  /** Metric name matching `[a-zA-Z_:][a-zA-Z0-9_:]*`. */
  name: string;
  /** One line saying what the metric counts. */
  help: string;
  /** Label names, each matching `[a-zA-Z_][a-zA-Z0-9_]*`. @default {[]} */
  labelNames?: readonly L[];
}
