import { Hono } from "hono";
import type { Routes } from "../net/mod.ts";
import { VERSION } from "./version.ts";

/** What the operational routes report on. */
export interface OpsSource {
  role: string;
  sequence(): number;
  ready(): boolean;
  /** What works only in part (an unreachable object store), shown by `/ready`. */
  degraded?(): string[];
  /** While not ready, what readiness waits for, for people (`/ready`'s `waiting_for`). */
  waitingFor?(): string | null;
  status(): Record<string, unknown>;
  /** The effective configuration, secrets masked (`GET /config`). */
  config?(): unknown;
  /** Starts a graceful shutdown, as SIGTERM does. */
  shutdown(): void;
}

/**
 * `GET /health` (liveness), `/ready` (initial scan or sync done), `/status`, `/config`
 * (the effective configuration, secrets masked), and
 * `POST /shutdown` (a graceful stop, used by `chronicle sync stop`; like every write
 * over `--http` it needs the token).
 */
export function opsRoutes(source: OpsSource): Routes {
  const app = new Hono();
  const started = Date.now();
  app.get("/health", (c) =>
    c.json({
      status: "ok",
      role: source.role,
      sequence: source.sequence(),
      version: VERSION,
      uptime_ms: Date.now() - started,
    }));
  app.get("/ready", (c) => {
    const ready = source.ready();
    const degraded = source.degraded?.() ?? [];
    const waiting = ready ? null : source.waitingFor?.() ?? null;
    return c.json(
      {
        ready,
        role: source.role,
        sequence: source.sequence(),
        degraded,
        ...(waiting === null ? {} : { waiting_for: waiting }),
      },
      ready ? 200 : 503,
    );
  });
  app.get("/status", (c) => c.json(source.status()));
  app.get("/config", (c) => {
    const config = source.config?.();
    return config === undefined
      ? c.json({ error: { code: "not_found", message: "No configuration here" } }, 404)
      : c.json(config);
  });
  app.post("/shutdown", (c) => {
    source.shutdown();
    return c.json({ stopping: true }, 202);
  });
  return app;
}
