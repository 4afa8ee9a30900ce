import { Counter } from "./counter.ts";
import { Gauge } from "./gauge.ts";
import { Histogram, type HistogramOptions } from "./histogram.ts";
import type { Metric, MetricOptions } from "./metric.ts";

/** The `Content-Type` of Prometheus' text exposition format 0.0.4. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/**
 * A set of metrics rendered together in Prometheus' text exposition format 0.0.4.
 *
 * @example Rendering a counter
 * ```ts
 * import { strictEqual } from "node:assert/strict";
 * import { Registry } from "./registry.ts";
 * const registry = new Registry();
 * registry.counter({ name: "jobs_total", help: "Jobs done" }).inc();
 * strictEqual(registry.render(), "# HELP jobs_total Jobs done\n# TYPE jobs_total counter\njobs_total 1\n");
 * ```
 */
export class Registry {
  #metrics = new Map<string, Metric>();
  #collectors = new Set<() => void>();

  /**
   * Adds a metric made elsewhere.
   *
   * @returns The metric.
   * @throws {TypeError} When a metric of that name is already registered.
   */
  register<M extends Metric>(metric: M): M {
    if (this.#metrics.has(metric.name)) {
      throw new TypeError(`Metric "${metric.name}" is already registered`);
    }
    this.#metrics.set(metric.name, metric);
    return metric;
  }

  /** Makes and registers a {@linkcode Counter}. */
  counter<L extends string = never>(options: MetricOptions<L>): Counter<L> {
    return this.register(new Counter<L>(options));
  }

  /** Makes and registers a {@linkcode Gauge}. */
  gauge<L extends string = never>(options: MetricOptions<L>): Gauge<L> {
    return this.register(new Gauge<L>(options));
  }

  /** Makes and registers a {@linkcode Histogram}. */
  histogram<L extends string = never>(options: HistogramOptions<L>): Histogram<L> {
    return this.register(new Histogram<L>(options));
  }

  /**
   * Looks a registered metric up by name.
   *
   * @returns The metric of that name, if registered.
   */
  get(name: string): Metric | undefined {
    return this.#metrics.get(name);
  }

  /**
   * Runs `collect` before every {@linkcode render}, to set gauges read from elsewhere
   * (the store's size, the current sequence).
   *
   * @returns A function that removes the collector.
   */
  addCollector(collect: () => void): () => void {
    this.#collectors.add(collect);
    return () => this.#collectors.delete(collect);
  }

  /**
   * Runs the collectors, then renders every metric in registration order.
   *
   * @returns The exposition text, ending in a newline.
   * @throws What a collector throws.
   */
  render(): string {
    for (const collect of this.#collectors) collect();
    let text = "";
    for (const metric of this.#metrics.values()) text += metric.render();
    return text;
  }

  /** Resets every metric (collectors stay). */
  resetAll(): void {
    for (const metric of this.#metrics.values()) metric.reset();
  }
}
