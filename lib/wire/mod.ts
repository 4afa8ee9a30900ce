/**
 * The replication wire protocol (PROTOCOL.md §1): `WireMessage` types, the bincode
 * codec, length-prefixed framing over byte streams and WebSocket messages, and the
 * serde JSON form used by test vectors and `chronicle wire`. Pure: no I/O.
 *
 * @example A round trip through a frame
 * ```ts
 * import { deepStrictEqual } from "node:assert/strict";
 * import { decodeWsMessage, encodeFrame, type WireMessage } from "./mod.ts";
 *
 * const msg: WireMessage = { type: "CatchupRequest", sandbox_id: "sb-1", since_sequence: 0n };
 * deepStrictEqual(decodeWsMessage(encodeFrame(msg)), msg);
 * ```
 *
 * @module
 */
export {
  type AckMessage,
  type BarrierConfirmationMessage,
  type BarrierRequestMessage,
  type CatchupRequestMessage,
  type ContentFetchRequestMessage,
  type ContentFetchResponseMessage,
  type ContentNotFoundMessage,
  type FullResyncRequiredMessage,
  type HeartbeatMessage,
  I64_MAX,
  I64_MIN,
  MAX_FRAME_PAYLOAD,
  type NotificationMessage,
  U64_MAX,
  WIRE_MESSAGE_TYPES,
  type WireMessage,
  type WireMessageType,
  type WriteBackEntry,
  type WriteBackMessage,
  type WriteBackResultMessage,
  type WriteOperation,
} from "./types.ts";
export { WireError, type WireErrorCode } from "./wire_error.ts";
export { encodeFrame, encodeMessage } from "./encode.ts";
export { decodeMessage } from "./decode.ts";
export { FrameReader, type FrameReaderOptions, readFrames } from "./frame_reader.ts";
export { decodeWsMessage, encodeWsMessage } from "./websocket.ts";
export { fromJson, toJson } from "./json.ts";
