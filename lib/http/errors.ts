/** The statuses Chronicle answers an error with. */
export type HttpErrorStatus =
  | 400
  | 401
  | 403
  | 404
  | 405
  | 409
  | 410
  | 413
  | 415
  | 421
  | 422
  | 429
  | 500
  | 501
  | 503;

/** An error a route turns into `{"error":{"code","message"}}` with its status. */
export class HttpError extends Error {
  /** The HTTP status to answer with. */
  readonly status: HttpErrorStatus;
  /** A stable machine-readable code, e.g. `not_found`. */
  readonly code: string;
  /** Makes the error; `message` is shown to the caller as it is. */
  constructor(status: HttpErrorStatus, code: string, message: string) {
    super(message);
    this.name = "HttpError";
    this.status = status;
    this.code = code;
  }
}

/**
 * Chronicle's JSON error body, `{"error":{"code","message"}}`, with its status.
 *
 * @param status The HTTP status.
 * @param code A stable machine-readable code, e.g. `not_found`.
 * @param message What happened and what to do, for a person.
 * @returns The response.
 */
export function errorResponse(status: HttpErrorStatus, code: string, message: string): Response {
  return Response.json({ error: { code, message } }, { status });
}
