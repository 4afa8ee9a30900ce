/**
 * Prometheus metrics: a small registry of counters, gauges and histograms rendered in the
 * text exposition format 0.0.4, Chronicle's named metrics in a process-wide registry, and
 * the `GET /metrics` route.
 *
 * @example Counting and rendering
 * ```ts
 * import { ok } from "node:assert/strict";
 * import { createChronicleMetrics, Registry } from "./mod.ts";
 * const registry = new Registry();
 * const metrics = createChronicleMetrics(registry);
 * metrics.writebacks.inc({ result: "accepted" });
 * ok(registry.render().includes('chronicle_writebacks_total{result="accepted"} 1\n'));
 * ```
 *
 * @module
 */
export type { Labels, Metric, MetricOptions, MetricType } from "./metric.ts";
export { Counter } from "./counter.ts";
export { SeriesMetric } from "./_series_metric.ts";
export { ValueMetric, type ValueSeries } from "./_value_metric.ts";
export { Gauge } from "./gauge.ts";
export {
  Histogram,
  type HistogramOptions,
  type HistogramSeries,
  type HistogramSnapshot,
  LATENCY_BUCKETS,
} from "./histogram.ts";
export { PROMETHEUS_CONTENT_TYPE, Registry } from "./registry.ts";
export {
  type ChronicleMetrics,
  createChronicleMetrics,
  defaultRegistry,
  metrics,
} from "./chronicle_metrics.ts";
export { metricsRoutes } from "./metrics_routes.ts";
