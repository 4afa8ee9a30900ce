import type { WireMessage } from "./types.ts";
import { MAX_FRAME_PAYLOAD } from "./types.ts";
import { decodeMessage } from "./decode.ts";
import { encodeFrame } from "./encode.ts";
import { WireError } from "./wire_error.ts";

/**
 * Encodes a message for one WebSocket binary message: the whole frame, length prefix
 * included (PROTOCOL.md §1).
 *
 * @param msg The message.
 * @returns The bytes to send with `socket.send`.
 * @throws {RangeError} An integer outside its range, or a payload over the limit.
 * @throws {TypeError} A field of the wrong type.
 *
 * @example Sending an Ack
 * ```ts
 * import { deepStrictEqual } from "node:assert/strict";
 * import { decodeWsMessage, encodeWsMessage } from "./mod.ts";
 *
 * const data = encodeWsMessage({ type: "Ack", up_to_sequence: 3n });
 * deepStrictEqual(decodeWsMessage(data), { type: "Ack", up_to_sequence: 3n });
 * ```
 */
export function encodeWsMessage(msg: WireMessage): Uint8Array {
  return encodeFrame(msg);
}

/**
 * Decodes one received WebSocket message, which must be a binary message holding
 * exactly one whole frame (its length header equal to the message length minus 4).
 * Set `socket.binaryType = "arraybuffer"` so that binary messages arrive as
 * `ArrayBuffer`. Byte vectors in the result alias `data`.
 *
 * @param data `MessageEvent.data`.
 * @returns The message.
 * @throws {WireError} `text_message` for a string, `truncated_header`,
 * `oversized_frame`, `truncated_payload` or `trailing_bytes` for a frame that does not
 * fill the message exactly, or any payload decoding error.
 * @throws {TypeError} `data` of another kind (such as a `Blob`).
 *
 * @example Rejecting a text message
 * ```ts
 * import { throws } from "node:assert/strict";
 * import { decodeWsMessage } from "./mod.ts";
 *
 * throws(() => decodeWsMessage("hello"), { code: "text_message" });
 * ```
 */
export function decodeWsMessage(data: ArrayBuffer | Uint8Array | string): WireMessage {
  if (typeof data === "string") {
    throw new WireError(
      "text_message",
      `WebSocket text message of '${data.length}' characters where a binary frame was expected`,
    );
  }
  let bytes: Uint8Array;
  if (data instanceof Uint8Array) bytes = data;
  else if (data instanceof ArrayBuffer) bytes = new Uint8Array(data);
  else throw new TypeError("WebSocket data must be an ArrayBuffer, Uint8Array or string");
  if (bytes.length < 4) {
    throw new WireError(
      "truncated_header",
      `WebSocket message of '${bytes.length}' bytes is shorter than a frame header`,
    );
  }
  const n = (bytes[0]! | (bytes[1]! << 8) | (bytes[2]! << 16) | (bytes[3]! << 24)) >>> 0;
  if (n > MAX_FRAME_PAYLOAD) {
    throw new WireError(
      "oversized_frame",
      `Frame length header '${n}' exceeds the limit of '${MAX_FRAME_PAYLOAD}' bytes`,
    );
  }
  const have = bytes.length - 4;
  if (n > have) {
    throw new WireError(
      "truncated_payload",
      `WebSocket message holds '${have}' payload bytes but the frame header says '${n}'`,
    );
  }
  if (n < have) {
    throw new WireError(
      "trailing_bytes",
      `WebSocket message holds '${have - n}' bytes after its '${n}'-byte frame`,
    );
  }
  return decodeMessage(bytes.subarray(4));
}
