/** Why a history question cannot be answered, as the REST API reports it. */
export type HistoryErrorCode = "not_found" | "deleted" | "too_large";

/**
 * A history question about a path that cannot be answered: an unknown path or iteration
 * (`not_found`), only deletions to compare (`deleted`), or content too large to diff line
 * by line (`too_large`). The REST API answers 404, 410 and 413; the CLI exits 1.
 */
export class HistoryError extends Error {
  /** What went wrong. */
  readonly code: HistoryErrorCode;

  /**
   * Makes the error.
   *
   * @param code What went wrong.
   * @param message A sentence-case message that names the path and iteration.
   */
  constructor(code: HistoryErrorCode, message: string) {
    super(message);
    this.name = "HistoryError";
    this.code = code;
  }
}
