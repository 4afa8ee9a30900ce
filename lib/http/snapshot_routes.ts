import { Hono } from "hono";
import type { Routes } from "../net/mod.ts";
import type { Context } from "hono";
import { DatabaseError } from "../db/mod.ts";
import { log } from "../log/mod.ts";
import { PathError } from "../paths/mod.ts";
import {
  AmbiguousIdError,
  CaptureError,
  diffToJson,
  rollbackResultToJson,
  SnapshotContentError,
  type Snapshots,
  snapshotToJson,
  TransactionStateError,
  transactionToJson,
  UnknownIdError,
  verifyReportToJson,
} from "../snapshot/mod.ts";
import { errorResponse, HttpError, type HttpErrorStatus } from "./errors.ts";

/** What {@linkcode snapshotRoutes} serves from. */
export interface SnapshotRoutesDeps {
  /** The workspace's snapshot engine. */
  snapshots: Snapshots;
}

/**
 * The snapshot REST surface (writes need the token; the app enforces it):
 *
 * | request | answer |
 * | --- | --- |
 * | `GET /snapshots?txn=ID&limit=N` | snapshots, oldest first |
 * | `POST /snapshots` `{"type","payload","transaction_id"?,"off_the_record"?}` (or `?otr=1`) | 201 `{"snapshot":{…}}`, or 200 `{"snapshot":null,"reason"}` |
 * | `GET /snapshots/verify?content=0` | `{"ok","snapshots","content_checked","head","problems"}` |
 * | `GET /snapshots/{id}` | the snapshot (ID or unique prefix) |
 * | `GET /snapshots/{id}/diff` | `{"snapshot_id","computed_at","changes"}` |
 * | `POST /snapshots/{id}/rollback` (`?otr=1` skips the snapshot before) | `{"snapshot","applied","problems"}` |
 * | `GET /transactions`, `GET /transactions/{id}` | transactions |
 * | `POST /transactions` | 201, the new transaction |
 * | `POST /transactions/{id}/commit` | the committed transaction |
 * | `POST /transactions/{id}/rollback` | `{"transaction","snapshot","applied","problems"}` |
 *
 * Errors: 400 bad path, body or ID prefix (`ambiguous_id` for an ambiguous one), 404
 * unknown ID, 409 a transaction in the wrong state or missing backed-up content, 422 a
 * path that cannot be captured, 500 an unreadable database.
 *
 * @param deps The snapshot engine.
 * @returns The routes, to mount at `/`.
 */
export function snapshotRoutes(deps: SnapshotRoutesDeps): Routes {
  const { snapshots } = deps;
  const app = new Hono();

  app.get("/snapshots", (c) => {
    const txn = c.req.query("txn");
    const limit = optionalInteger(c.req.query("limit"), "limit");
    const list = snapshots.list({
      ...(txn === undefined ? {} : { transactionId: txn }),
      ...(limit === undefined ? {} : { limit }),
    });
    return c.json(list.map(snapshotToJson));
  });

  app.post("/snapshots", async (c) => {
    const body = await jsonBody(c);
    const type = body.type;
    if (typeof type !== "string") throw badRequest('The body needs a string "type"');
    const payload = body.payload ?? {};
    if (typeof payload !== "object" || payload === null || Array.isArray(payload)) {
      throw badRequest('"payload" must be an object');
    }
    const transactionId = body.transaction_id;
    if (
      transactionId !== undefined && transactionId !== null && typeof transactionId !== "string"
    ) {
      throw badRequest('"transaction_id" must be a string');
    }
    const offTheRecord = flag(c.req.query("otr")) || body.off_the_record === true;
    const snap = await snapshots.snapshot(
      { type, payload: payload as Record<string, unknown> },
      { transactionId: transactionId ?? null, offTheRecord },
    );
    if (snap) return c.json({ snapshot: snapshotToJson(snap) }, 201);
    const reason = offTheRecord || snapshots.offTheRecord ? "off_the_record" : "no_files_changed";
    return c.json({ snapshot: null, reason });
  });

  app.get("/snapshots/verify", async (c) => {
    const content = c.req.query("content");
    const report = await snapshots.verify({ content: content === undefined || flag(content) });
    return c.json(verifyReportToJson(report));
  });

  app.get("/snapshots/:id", (c) => c.json(snapshotToJson(snapshots.get(c.req.param("id")))));

  app.get("/snapshots/:id/diff", async (c) => {
    return c.json(diffToJson(await snapshots.diff(c.req.param("id"))));
  });

  app.post("/snapshots/:id/rollback", async (c) => {
    const body = await jsonBody(c, { optional: true });
    const offTheRecord = flag(c.req.query("otr")) || body.off_the_record === true;
    const result = await snapshots.rollback(c.req.param("id"), { offTheRecord });
    return c.json(rollbackResultToJson(result));
  });

  app.get("/transactions", (c) => c.json(snapshots.transactions().map(transactionToJson)));

  app.post("/transactions", (c) => c.json(transactionToJson(snapshots.beginTransaction()), 201));

  app.get("/transactions/:id", (c) => {
    return c.json(transactionToJson(snapshots.transaction(c.req.param("id"))));
  });

  app.post("/transactions/:id/commit", (c) => {
    return c.json(transactionToJson(snapshots.commit(c.req.param("id"))));
  });

  app.post("/transactions/:id/rollback", async (c) => {
    const body = await jsonBody(c, { optional: true });
    const offTheRecord = flag(c.req.query("otr")) || body.off_the_record === true;
    const result = await snapshots.rollbackTransaction(c.req.param("id"), { offTheRecord });
    return c.json(rollbackResultToJson(result));
  });

  app.onError((error, c) => {
    const [status, code] = classify(error);
    if (status === 500) {
      log("error", "snapshot request failed", { method: c.req.method, path: c.req.path, error });
    }
    return errorResponse(status, code, error.message);
  });
  return app;
}

function classify(error: Error): [HttpErrorStatus, string] {
  if (error instanceof HttpError) return [error.status, error.code];
  if (error instanceof UnknownIdError) return [404, "not_found"];
  if (error instanceof AmbiguousIdError) return [400, "ambiguous_id"];
  if (error instanceof PathError) return [400, "bad_path"];
  if (error instanceof TransactionStateError) return [409, "conflict"];
  if (error instanceof SnapshotContentError) return [409, "content_missing"];
  if (error instanceof CaptureError) return [422, "capture_failed"];
  if (error instanceof DatabaseError) return [500, "database"];
  if (error instanceof TypeError || error instanceof RangeError || error instanceof SyntaxError) {
    return [400, "bad_request"];
  }
  return [500, "internal"];
}

/**
 * The request's body as a JSON object; with `optional`, an empty body reads as `{}`.
 *
 * @throws {HttpError} 400 when the body is not JSON, or not an object.
 */
async function jsonBody(
  c: Context,
  options: { optional?: boolean } = {},
): Promise<Record<string, unknown>> {
  const text = await c.req.text();
  if (options.optional && text.trim() === "") return {};
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw badRequest("The body must be JSON");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw badRequest("The body must be a JSON object");
  }
  return body as Record<string, unknown>;
}

function optionalInteger(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw badRequest(`Invalid ${name} "${text}": expected a whole number`);
  }
  return Number(text);
}

function flag(text: string | undefined): boolean {
  return text !== undefined && /^(1|true|yes|on)$/i.test(text);
}

function badRequest(message: string): HttpError {
  return new HttpError(400, "bad_request", message);
}
