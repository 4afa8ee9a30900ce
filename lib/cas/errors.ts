/** Content (or one chunk of it) that the store does not hold. */
export class ContentNotFoundError extends Error {
  /** The hash that was asked for. */
  readonly hash: string;

  /**
   * Makes the error for content the store lacks.
   *
   * @param hash The missing content's hash.
   * @param what What was missing, for the message. @default {"Content"}
   */
  constructor(hash: string, what = "Content", options?: ErrorOptions) {
    super(`${what} "${hash}" is not in the store`, options);
    this.name = "ContentNotFoundError";
    this.hash = hash;
  }
}

/**
 * Bytes that are not what their hash says: a corrupted or truncated stored file, fetched
 * bytes that hash to something else, or a manifest that cannot describe the content.
 */
export class CorruptContentError extends Error {
  /** The hash the content should have. */
  readonly hash: string;
  /** The hash the bytes really have, or `null` when the problem is not a hash mismatch. */
  readonly actual: string | null;

  /**
   * Makes the error for bytes that do not match their hash.
   *
   * @param hash The expected hash.
   * @param actual The hash the bytes have, when they were hashed.
   * @param reason What is wrong, when it is not a hash mismatch.
   */
  constructor(hash: string, actual: string | null, reason?: string, options?: ErrorOptions) {
    const detail = reason ?? `its bytes hash to "${actual}"`;
    super(`Content "${hash}" is corrupt: ${detail}`, options);
    this.name = "CorruptContentError";
    this.hash = hash;
    this.actual = actual;
  }
}
