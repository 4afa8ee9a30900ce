import { Hono } from "hono";
import type { Routes } from "../net/mod.ts";
import type { Context } from "hono";
import { parseRestorePoint, restoreResultToJson, type Snapshots } from "../snapshot/mod.ts";
import { ORIGINS } from "../store/mod.ts";
import type { Workspace } from "../workspace/mod.ts";
import { readBodyLimited } from "./body_limit.ts";
import { HttpError } from "./errors.ts";
import { historyEntry } from "./files_routes.ts";

/** Longest list of paths one `POST /restore` takes. */
export const MAX_RESTORE_PATHS = 10_000;
/** Largest body one `POST /restore` takes. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

/**
 * `POST /restore` (a write: the token over `--http`), done by the running process so that
 * its own watcher never records the change first, and every change has origin `restore`:
 *
 * | body | answer |
 * | --- | --- |
 * | `{"path":P,"at":N}` | 201 the new iteration (as in history), 200 the latest when P already holds it |
 * | `{"to":SEQ\|TIME,"paths":[P…]?,"off_the_record":bool?}` | what `restore --to` did: `{"sequence","changes","snapshot","applied","problems"}` |
 *
 * Errors: 400 a bad body or path, 404 an unknown path or iteration, 409 content missing
 * from the store, 410 an iteration that is a deletion.
 *
 * @param workspace The running workspace.
 * @param snapshots Its snapshot engine (point-in-time restores snapshot first).
 * @returns The route, to mount at `/`.
 */
export function restoreRoutes(workspace: Workspace, snapshots: Snapshots): Routes {
  const app = new Hono();
  app.post("/restore", async (c) => {
    const body = await jsonObject(c);
    if (body.to !== undefined) return c.json(await restoreTo(snapshots, body));
    const path = checked(workspace, body.path);
    const at = body.at;
    if (typeof at !== "number" || !Number.isSafeInteger(at) || at < 1) {
      throw new HttpError(400, "bad_parameter", 'Give "at", the iteration to restore (>= 1)');
    }
    const iteration = workspace.store.iteration(path, at);
    if (!iteration) throw new HttpError(404, "not_found", `Unknown iteration ${at} of "${path}"`);
    if (iteration.deleted) {
      throw new HttpError(410, "deleted", `Iteration ${at} of "${path}" is a deletion`);
    }
    const recorded = await workspace.writeContent(path, iteration.hash, iteration.mode, {
      origin: ORIGINS.restore,
    });
    return c.json(historyEntry(recorded ?? workspace.store.latest(path)!), recorded ? 201 : 200);
  });
  return app;
}

async function restoreTo(snapshots: Snapshots, body: Record<string, unknown>) {
  const to = body.to;
  if (typeof to !== "number" && typeof to !== "string") {
    throw new HttpError(400, "bad_parameter", '"to" must be a sequence or a time');
  }
  const paths = body.paths ?? [];
  if (
    !Array.isArray(paths) || paths.length > MAX_RESTORE_PATHS ||
    !paths.every((path) => typeof path === "string")
  ) {
    throw new HttpError(
      400,
      "bad_parameter",
      `"paths" must be a list of at most ${MAX_RESTORE_PATHS} paths`,
    );
  }
  let point;
  try {
    point = parseRestorePoint(String(to), Date.now());
  } catch (error) {
    throw new HttpError(400, "bad_parameter", (error as Error).message);
  }
  // A path refused (400) or old content missing (409) is answered by `createApp`.
  const plan = snapshots.restorePlan(point, paths as string[]);
  const result = await snapshots.restoreTo(plan, { offTheRecord: body.off_the_record === true });
  return restoreResultToJson(result);
}

function checked(workspace: Workspace, path: unknown): string {
  if (typeof path !== "string") {
    throw new HttpError(400, "bad_parameter", 'Give "path" and "at", or "to"');
  }
  // A refused path throws the `PathError` that `createApp` answers 400 `bad_path`.
  return workspace.checkPath(path);
}

async function jsonObject(c: Context): Promise<Record<string, unknown>> {
  // Refused as it streams in, so an oversized body is never held whole.
  const bytes = await readBodyLimited(c.req.raw, MAX_BODY_BYTES);
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new HttpError(400, "bad_request", "The body must be JSON");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new HttpError(400, "bad_request", "The body must be a JSON object");
  }
  return body as Record<string, unknown>;
}
