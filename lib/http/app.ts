import { Hono } from "hono";
import { log } from "../log/mod.ts";
import { type Routes, sameSecret } from "../net/mod.ts";
import { HistoryError } from "../history/mod.ts";
import { PathError } from "../paths/mod.ts";
import { SnapshotContentError } from "../snapshot/mod.ts";
import { errorResponse, HttpError } from "./errors.ts";

/** Options for {@linkcode createApp}. */
export interface AppOptions {
  /** Bearer token every non-GET request must carry; `undefined` means writes are refused. */
  token: string | undefined;
  /**
   * Whether writes are allowed without a token: true only on the control socket, whose
   * file mode (0600) already limits it to this user.
   */
  trustedCaller: boolean;
  /** The route groups to serve, in order. */
  routes: Routes[];
}

/**
 * Chronicle's REST application: the given route groups behind one error format
 * (`{"error":{"code","message"}}`) and one write-authorization rule. Errors a route lets
 * through are mapped here, once for every group: an `HttpError` as it says, a `PathError`
 * to 400 `bad_path`, a `HistoryError` to 404, 410 or 413 by its
 * code, a `SnapshotContentError` to 409 `content_missing`, a `SyntaxError` to 400 `bad_request`, anything else to 500.
 */
export function createApp(options: AppOptions): Routes {
  const app = new Hono();
  app.use("*", async (c, next) => {
    if (c.req.method !== "GET" && c.req.method !== "HEAD" && !options.trustedCaller) {
      authorize(c.req.header("authorization"), options.token);
    }
    await next();
  });
  for (const routes of options.routes) app.route("/", honoOf(routes));
  app.notFound((c) =>
    errorResponse(404, "not_found", `No route for ${c.req.method} ${c.req.path}`)
  );
  app.onError((error, c) => {
    if (error instanceof HttpError) {
      return errorResponse(error.status, error.code, error.message);
    }
    if (error instanceof SyntaxError) return errorResponse(400, "bad_request", error.message);
    // A path refused by the workspace's rules, wherever a route met it (the message names
    // the workspace path only).
    if (error instanceof PathError) return errorResponse(400, "bad_path", error.message);
    if (error instanceof HistoryError) {
      const status = error.code === "not_found" ? 404 : error.code === "deleted" ? 410 : 413;
      return errorResponse(status, error.code, error.message);
    }
    // A restore or rollback whose old content is gone from the store: nothing was changed.
    if (error instanceof SnapshotContentError) {
      return errorResponse(409, "content_missing", error.message);
    }
    log("error", "request failed", { method: c.req.method, path: c.req.path, error });
    // The details (which may name the server's files) go to the log only.
    return errorResponse(500, "internal", "Internal error; the server's log has the details");
  });
  return app;
}

/**
 * The framework application behind a route group: every area makes its groups with
 * `new Hono()`, so this only guards against a group made some other way.
 */
function honoOf(routes: Routes): Hono {
  if (!(routes instanceof Hono)) throw new TypeError("A route group must be a Hono app");
  return routes;
}

function authorize(header: string | undefined, token: string | undefined): void {
  if (token === undefined) {
    throw new HttpError(
      401,
      "unauthorized",
      "Writes over HTTP need a token: start Chronicle with --token",
    );
  }
  const given = header?.startsWith("Bearer ") ? header.slice("Bearer ".length) : undefined;
  if (given === undefined) throw new HttpError(401, "unauthorized", "Missing bearer token");
  if (!sameSecret(given, token)) throw new HttpError(401, "unauthorized", "Wrong bearer token");
}
