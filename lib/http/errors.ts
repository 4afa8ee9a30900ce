import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/** An error a route turns into `{"error":{"code","message"}}` with its status. */
export class HttpError extends Error {
  /** The HTTP status to answer with. */
  readonly status: ContentfulStatusCode;
  /** A stable machine-readable code, e.g. `not_found`. */
  readonly code: string;
  /** Makes the error; `message` is shown to the caller as it is. */
  constructor(status: ContentfulStatusCode, code: string, message: string) {
    super(message);
    this.name = "HttpError";
    this.status = status;
    this.code = code;
  }
}

/** Answers with Chronicle's JSON error body. */
export function errorResponse(
  c: Context,
  status: ContentfulStatusCode,
  code: string,
  message: string,
): Response {
  return c.json({ error: { code, message } }, status);
}
