import { Hono } from "hono";
import type { Routes } from "../net/mod.ts";
import { defaultRegistry } from "./chronicle_metrics.ts";
import { PROMETHEUS_CONTENT_TYPE, type Registry } from "./registry.ts";

/**
 * The `GET /metrics` route, answering in Prometheus' text format 0.0.4.
 *
 * @param registry What to render. @default {defaultRegistry}
 * @returns A route group for the REST app.
 *
 * @example Scraping
 * ```ts
 * import { strictEqual } from "node:assert/strict";
 * import { Registry } from "./registry.ts";
 * import { metricsRoutes } from "./metrics_routes.ts";
 * const registry = new Registry();
 * registry.gauge({ name: "up", help: "Up" }).set(1);
 * const response = await metricsRoutes(registry).request("/metrics");
 * strictEqual(await response.text(), "# HELP up Up\n# TYPE up gauge\nup 1\n");
 * ```
 */
export function metricsRoutes(registry: Registry = defaultRegistry): Routes {
  const app = new Hono();
  app.get(
    "/metrics",
    () => new Response(registry.render(), { headers: { "content-type": PROMETHEUS_CONTENT_TYPE } }),
  );
  return app;
}
