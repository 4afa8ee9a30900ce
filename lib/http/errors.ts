import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/** An error a route turns into `{"error":{"code","message"}}` with its status. */
export class HttpError extends Error {
  readonly status: ContentfulStatusCode;
  readonly code: string;
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
