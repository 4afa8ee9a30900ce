import { type Labels, splitArgs } from "./_series.ts";
import { ValueMetric } from "./_value_metric.ts";

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
export class Gauge<L extends string = never> extends ValueMetric<L> {
  /** Always `gauge`. */
  readonly type = "gauge" as const;

  /**
   * Sets the series with these labels.
   *
   * @throws {TypeError} For missing, extra or non-string labels, or a missing value.
   */
  set(value: number): void;
  /** Sets the series with these labels to `value`. */
  set(labels: Labels<L>, value: number): void;
  set(first: Labels<L> | number, second?: number): void {
    const { labels, value } = splitArgs(first, second, undefined);
    if (typeof value !== "number") throw new TypeError(`Gauge "${this.name}" needs a number`);
    this.entry(labels).value = value;
  }

  /** Adds to the series (1 unless given). */
  inc(value?: number): void;
  /** Adds to the series with these labels (1 unless given). */
  inc(labels: Labels<L>, value?: number): void;
  inc(first?: Labels<L> | number, second?: number): void {
    const { labels, value } = splitArgs(first, second, 1);
    this.entry(labels).value += value ?? 1;
  }

  /** Subtracts from the series (1 unless given). */
  dec(value?: number): void;
  /** Subtracts from the series with these labels (1 unless given). */
  dec(labels: Labels<L>, value?: number): void;
  dec(first?: Labels<L> | number, second?: number): void {
    const { labels, value } = splitArgs(first, second, 1);
    this.entry(labels).value -= value ?? 1;
  }
}
