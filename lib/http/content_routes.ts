import { Hono } from "hono";
import { ContentNotFoundError, CorruptContentError, isContentHash } from "../cas/mod.ts";
import type { Routes } from "../net/mod.ts";
import type { Workspace } from "../workspace/mod.ts";
import { HttpError } from "./errors.ts";

/**
 * `GET /content/{hash}`: the bytes of a content by its hash, verified, read through the
 * CAS's tier when it lacks them (a sandbox replica's reads through its master). For
 * another process on the same workspace, which has no such tier (see the CLI's
 * `RunningChronicleTier`).
 */
export function contentRoutes(workspace: Workspace): Routes {
  const app = new Hono();
  app.get("/content/:hash", async (c) => {
    const hash = c.req.param("hash");
    if (!isContentHash(hash)) {
      throw new HttpError(400, "bad_request", `"${hash.slice(0, 80)}" is not a content hash`);
    }
    // The first piece is read before answering: a content missing or corrupt is a clear
    // error status, not a body that breaks off.
    const reader = workspace.cas.readStream(hash).getReader();
    let first: ReadableStreamReadResult<Uint8Array>;
    try {
      first = await reader.read();
    } catch (error) {
      if (error instanceof ContentNotFoundError) {
        throw new HttpError(404, "not_found", error.message);
      }
      if (error instanceof CorruptContentError) {
        throw new HttpError(500, "corrupt_content", error.message);
      }
      throw error;
    }
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        if (first.done) controller.close();
        else controller.enqueue(first.value);
      },
      async pull(controller) {
        try {
          const next = await reader.read();
          if (next.done) controller.close();
          else controller.enqueue(next.value);
        } catch (error) {
          controller.error(error);
        }
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(body, {
      headers: { "content-type": "application/octet-stream", etag: `"${hash}"` },
    });
  });
  return app;
}
