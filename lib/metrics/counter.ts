import { type Labels, splitArgs } from "./_series.ts";
import { ValueMetric } from "./_value_metric.ts";

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
export class Counter<L extends string = never> extends ValueMetric<L> {
  /** Always `counter`. */
  readonly type = "counter" as const;

  /**
   * Adds to the series with these labels (none for an unlabelled counter).
   *
   * @param labels Every label of the metric, as strings.
   * @param value How much to add. @default {1}
   * @throws {TypeError} For missing, extra or non-string labels.
   * @throws {RangeError} For a negative or non-finite amount.
   */
  inc(value?: number): void;
  /** Adds `value` to the series with these labels. */
  inc(labels: Labels<L>, value?: number): void;
  inc(first?: Labels<L> | number, second?: number): void {
    const { labels, value } = splitArgs(first, second, 1);
    if (value === undefined || !Number.isFinite(value) || value < 0) {
      throw new RangeError(`Counter "${this.name}" can only grow, got ${value}`);
    }
    this.entry(labels).value += value;
  }

  /**
   * Brings the unlabelled series up to a running total kept elsewhere (e.g. bytes an
   * uploader has sent), adding what it grew by; a smaller total leaves it as it is, since
   * a counter never goes down.
   *
   * @param total The running total.
   * @throws {RangeError} For a non-finite total.
   */
  raiseTo(total: number): void {
    if (!Number.isFinite(total)) {
      throw new RangeError(`Counter "${this.name}" needs a finite total, got ${total}`);
    }
    const grown = total - this.get();
    if (grown > 0) this.inc(grown);
  }
}
