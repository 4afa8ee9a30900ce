import { Hono } from "hono";
import { ContentNotFoundError, CorruptContentError, isContentHash } from "../cas/mod.ts";
import type { Routes } from "../net/mod.ts";
import type { Workspace } from "../workspace/mod.ts";
import { HttpError } from "./errors.ts";
import { verifiedBody } from "./_verified_body.ts";

/**
 * `GET /content/{hash}`: the bytes of a content by its hash, verified, read through the
 * CAS's tier when it lacks them (a sandbox replica's reads through its master). For
 * another process on the same workspace, which has no such tier (see the CLI's
 * `runningChronicleTier`).
 */
export function contentRoutes(workspace: Workspace): Routes {
  const app = new Hono();
  app.get("/content/:hash", async (c) => {
    const hash = c.req.param("hash");
    if (!isContentHash(hash)) {
      throw new HttpError(400, "bad_request", `"${hash.slice(0, 80)}" is not a content hash`);
    }
    const body = await verifiedBody(workspace.cas, hash, refused, { hash });
    return new Response(body, {
      headers: { "content-type": "application/octet-stream", etag: `"${hash}"` },
    });
  });
  return app;
}

/** What a content that cannot be read answers. */
function refused(error: unknown): HttpError {
  if (error instanceof ContentNotFoundError) return new HttpError(404, "not_found", error.message);
  if (error instanceof CorruptContentError) {
    return new HttpError(500, "corrupt_content", error.message);
  }
  throw error;
}
