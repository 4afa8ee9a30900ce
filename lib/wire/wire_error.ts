/** What went wrong with bytes or text that should hold wire messages. */
export type WireErrorCode =
  /** A variant index that the enum does not have. */
  | "unknown_variant"
  /** A bool byte other than 0 or 1. */
  | "invalid_bool"
  /** An Option tag other than 0 or 1. */
  | "invalid_option"
  /** String bytes that are not UTF-8. */
  | "invalid_utf8"
  /** A string or vector length running past the end of the payload. */
  | "length_past_end"
  /** A fixed-width field running past the end of the payload. */
  | "unexpected_end"
  /** Bytes left over after a whole message. */
  | "trailing_bytes"
  /** A frame length header above the payload limit. */
  | "oversized_frame"
  /** The stream or message ends inside the 4-byte length header. */
  | "truncated_header"
  /** The stream or message ends before the payload the header announced. */
  | "truncated_payload"
  /** A WebSocket text message where a binary frame was expected. */
  | "text_message"
  /** JSON that is malformed or does not describe a `WireMessage`. */
  | "invalid_json";

/**
 * A protocol violation in received bytes or JSON. The connection that produced it
 * should be closed; nothing else is affected.
 *
 * @example Telling a protocol error apart
 * ```ts
 * import { decodeMessage, WireError } from "./mod.ts";
 *
 * try {
 *   decodeMessage(new Uint8Array([12, 0, 0, 0]));
 * } catch (error) {
 *   if (!(error instanceof WireError) || error.code !== "unknown_variant") throw error;
 * }
 * ```
 */
export class WireError extends Error {
  /** Machine-readable kind of the problem. */
  readonly code: WireErrorCode;

  /**
   * Makes the error with its code and message.
   *
   * @param code The kind of problem.
   * @param message Sentence-case description naming the field and byte offset.
   * @param options Standard error options, e.g. a `cause`.
   */
  constructor(code: WireErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "WireError";
    this.code = code;
  }
}
