import { Hono } from "hono";
import type { Routes } from "../net/mod.ts";
import { HttpError } from "../http/mod.ts";
import {
  isConflictChoice,
  type MasterHandle,
  type ReplicaHandle,
  ResolveError,
} from "../replication/mod.ts";

/** The replication side of a running Chronicle, if any. */
export type ReplicationHandle =
  | { kind: "master"; master: MasterHandle }
  | { kind: "replica"; replica: ReplicaHandle }
  | { kind: "none" };

/** Longest `POST /sync/wait` may block. */
const MAX_WAIT_MS = 10 * 60_000;

/**
 * Replication control for the CLI and desktop clients: `GET /sync/status`, `POST
 * /sync/wait?timeout_ms=N` (a barrier: returns once this replica holds everything the
 * master held when asked), `POST /sync/resolve` `{"path","keep"}` (local-sync conflicts),
 * and `GET /conflicts`.
 */
export function replicationRoutes(handle: () => ReplicationHandle): Routes {
  const app = new Hono();
  app.get("/sync/status", (c) => {
    const current = handle();
    if (current.kind === "master") return c.json(current.master.status());
    if (current.kind === "replica") return c.json(current.replica.status());
    return c.json({ role: "standalone" });
  });
  app.post("/sync/wait", async (c) => {
    const replica = requireReplica(handle());
    const text = c.req.query("timeout_ms") ?? "60000";
    const timeoutMs = Number(text);
    if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 0 || timeoutMs > MAX_WAIT_MS) {
      throw new HttpError(
        400,
        "bad_parameter",
        `Invalid timeout_ms "${text}": expected 0 to ${MAX_WAIT_MS}`,
      );
    }
    return c.json(await replica.syncWait(timeoutMs));
  });
  app.post("/sync/resolve", async (c) => {
    const replica = requireReplica(handle());
    const body = await c.req.json().catch(() => undefined) as
      | { path?: unknown; keep?: unknown }
      | undefined;
    const keep = body?.keep;
    if (typeof body?.path !== "string" || !isConflictChoice(keep)) {
      throw new HttpError(
        400,
        "bad_request",
        'Expected {"path": "...", "keep": "local" | "upstream" | "merged"}',
      );
    }
    try {
      return c.json(await replica.resolveConflict(body.path, keep));
    } catch (error) {
      // A refused path is answered 400 `bad_path` by createApp.
      if (error instanceof ResolveError) throw new HttpError(409, "cannot_resolve", error.message);
      throw error;
    }
  });
  app.get("/conflicts", (c) => {
    const current = handle();
    // A master lists what it rejected (and kept); a replica what its master rejected.
    if (current.kind === "master") {
      return c.json({ conflicts: current.master.conflicts(), refused: [] });
    }
    const replica = requireReplica(current);
    const status = replica.status();
    return c.json({ conflicts: status.conflicts, refused: status.refused });
  });
  return app;
}

function requireReplica(current: ReplicationHandle): ReplicaHandle {
  if (current.kind !== "replica") {
    throw new HttpError(
      409,
      "not_a_replica",
      "This Chronicle is not a replica (start it with --connect or --ws-connect)",
    );
  }
  return current.replica;
}
