import type { WireMessage, WriteBackEntry } from "./types.ts";
import { MAX_FRAME_PAYLOAD } from "./types.ts";
import { Writer } from "./_writer.ts";

/**
 * Encodes a message as a bincode payload (no length header), exactly as Rust's
 * `bincode::serialize` would.
 *
 * Small results (up to 4 KiB) are views into a 64 KiB slab shared with other results,
 * so one allocation serves many messages: treat them as read-only and never transfer
 * or detach their `buffer`.
 *
 * @param msg The message.
 * @returns The payload bytes, a view that may share its buffer.
 * @throws {RangeError} An integer outside its `u64`/`i64` range.
 * @throws {TypeError} A field of the wrong type, or an unknown `type`.
 *
 * @example Encoding an Ack
 * ```ts
 * import { deepStrictEqual } from "node:assert/strict";
 * import { encodeMessage } from "./mod.ts";
 *
 * const bytes = encodeMessage({ type: "Ack", up_to_sequence: 17n });
 * deepStrictEqual([...bytes], [6, 0, 0, 0, 17, 0, 0, 0, 0, 0, 0, 0]);
 * ```
 */
export function encodeMessage(msg: WireMessage): Uint8Array {
  const w = new Writer(sizeHint(msg));
  writeMessage(w, msg);
  return w.bytes();
}

/**
 * Encodes a message as a whole frame: a 4-byte little-endian payload length, then the
 * bincode payload.
 *
 * Small results share a slab buffer as described for {@linkcode encodeMessage}.
 *
 * @param msg The message.
 * @returns The frame bytes, a view that may share its buffer.
 * @throws {RangeError} An integer outside its range, or a payload over `MAX_FRAME_PAYLOAD`.
 * @throws {TypeError} A field of the wrong type, or an unknown `type`.
 *
 * @example Framing a Heartbeat
 * ```ts
 * import { deepStrictEqual } from "node:assert/strict";
 * import { encodeFrame } from "./mod.ts";
 *
 * const frame = encodeFrame({ type: "Heartbeat", agent_sequence: 1n, agent_iteration: -1n });
 * deepStrictEqual(frame.length, 4 + 20);
 * deepStrictEqual(frame[0], 20);
 * ```
 */
export function encodeFrame(msg: WireMessage): Uint8Array {
  const w = new Writer(4 + sizeHint(msg), 4);
  writeMessage(w, msg);
  const length = w.position - 4;
  if (length > MAX_FRAME_PAYLOAD) {
    throw new RangeError(
      `Payload of '${length}' bytes exceeds the frame limit of '${MAX_FRAME_PAYLOAD}' bytes`,
    );
  }
  w.patchU32(0, length);
  const frame = w.bytes();
  // The header is read back from the bytes returned: a length written into a buffer the
  // message has since left would show here, and such a frame must never be sent.
  const header = frame[0]! | frame[1]! << 8 | frame[2]! << 16 | frame[3]! << 24;
  if (header >>> 0 !== frame.length - 4) {
    throw new Error(
      `Encoder fault: the frame header says '${header >>> 0}' bytes but '${
        frame.length - 4
      }' were written`,
    );
  }
  return frame;
}

/** Exact size for ASCII strings; non-ASCII strings make the writer grow. */
function sizeHint(msg: WireMessage): number {
  switch (msg.type) {
    case "Notification":
      return 4 + 8 + 8 + len(msg.filepath) + 8 + len(msg.content_hash) + 8 + 8 + 1 + 1 +
        (msg.inline_content ? 8 + byteLen(msg.inline_content) : 0);
    case "WriteBack": {
      let n = 4 + 8 + len(msg.sandbox_id) + 8;
      if (Array.isArray(msg.entries)) {
        for (const e of msg.entries) {
          if (typeof e !== "object" || e === null) continue;
          n += 8 + 8 + len(e.filepath) + 4 + 1 + 1 + 8 + 8 + 1 + 8 +
            (e.operation?.type === "Rename" ? 8 + len(e.operation.new_path) : 0) +
            (e.content_hash === null ? 0 : 8 + len(e.content_hash)) +
            (e.content_bytes === null ? 0 : 8 + byteLen(e.content_bytes));
        }
      }
      return n;
    }
    case "WriteBackResult": {
      let n = 4 + 8 + 8;
      if (Array.isArray(msg.accepted)) n += msg.accepted.length * 16;
      if (Array.isArray(msg.rejected)) {
        for (const r of msg.rejected) n += 16 + len(r?.[1]);
      }
      return n;
    }
    case "ContentFetchResponse":
      return 4 + 8 + len(msg.content_hash) + 8 + byteLen(msg.content) + 8 + 1 +
        (msg.chunk_manifest === null ? 0 : 8 + len(msg.chunk_manifest));
    case "ContentFetchRequest":
    case "ContentNotFound":
      return 4 + 8 + len(msg.content_hash);
    case "CatchupRequest":
      return 4 + 8 + len(msg.sandbox_id) + 8;
    case "FullResyncRequired":
      return 4 + 8 + len(msg.reason) + 8;
    default:
      return 32;
  }
}

function len(s: unknown): number {
  return typeof s === "string" ? s.length : 0;
}

function byteLen(b: unknown): number {
  return b instanceof Uint8Array ? b.length : 0;
}

function writeMessage(w: Writer, msg: WireMessage): void {
  switch (msg.type) {
    case "Notification":
      w.u32(0);
      w.u64(msg.sequence, "Notification.sequence");
      w.string(msg.filepath, "Notification.filepath");
      w.string(msg.content_hash, "Notification.content_hash");
      w.u64(msg.size, "Notification.size");
      w.i64(msg.permissions, "Notification.permissions");
      w.bool(msg.is_deletion, "Notification.is_deletion");
      w.tag(msg.inline_content !== null);
      if (msg.inline_content !== null) {
        w.byteVec(msg.inline_content, "Notification.inline_content");
      }
      return;
    case "Heartbeat":
      w.u32(1);
      w.u64(msg.agent_sequence, "Heartbeat.agent_sequence");
      w.i64(msg.agent_iteration, "Heartbeat.agent_iteration");
      return;
    case "WriteBack":
      w.u32(2);
      w.string(msg.sandbox_id, "WriteBack.sandbox_id");
      w.count(msg.entries, "WriteBack.entries");
      for (const entry of msg.entries) writeEntry(w, entry);
      return;
    case "WriteBackResult":
      w.u32(3);
      w.count(msg.accepted, "WriteBackResult.accepted");
      for (const pair of msg.accepted) {
        w.u64(pair[0], "WriteBackResult.accepted.0");
        w.i64(pair[1], "WriteBackResult.accepted.1");
      }
      w.count(msg.rejected, "WriteBackResult.rejected");
      for (const pair of msg.rejected) {
        w.u64(pair[0], "WriteBackResult.rejected.0");
        w.string(pair[1], "WriteBackResult.rejected.1");
      }
      return;
    case "BarrierRequest":
      w.u32(4);
      w.u64(msg.sequence, "BarrierRequest.sequence");
      return;
    case "BarrierConfirmation":
      w.u32(5);
      w.bool(msg.satisfied, "BarrierConfirmation.satisfied");
      w.u64(msg.current_sequence, "BarrierConfirmation.current_sequence");
      return;
    case "Ack":
      w.u32(6);
      w.u64(msg.up_to_sequence, "Ack.up_to_sequence");
      return;
    case "ContentFetchRequest":
      w.u32(7);
      w.string(msg.content_hash, "ContentFetchRequest.content_hash");
      return;
    case "ContentFetchResponse":
      w.u32(8);
      w.string(msg.content_hash, "ContentFetchResponse.content_hash");
      w.byteVec(msg.content, "ContentFetchResponse.content");
      w.u64(msg.size, "ContentFetchResponse.size");
      w.tag(msg.chunk_manifest !== null);
      if (msg.chunk_manifest !== null) {
        w.string(msg.chunk_manifest, "ContentFetchResponse.chunk_manifest");
      }
      return;
    case "ContentNotFound":
      w.u32(9);
      w.string(msg.content_hash, "ContentNotFound.content_hash");
      return;
    case "CatchupRequest":
      w.u32(10);
      w.string(msg.sandbox_id, "CatchupRequest.sandbox_id");
      w.u64(msg.since_sequence, "CatchupRequest.since_sequence");
      return;
    case "FullResyncRequired":
      w.u32(11);
      w.string(msg.reason, "FullResyncRequired.reason");
      w.u64(msg.current_sequence, "FullResyncRequired.current_sequence");
      return;
    default: {
      const type: unknown = (msg as { type?: unknown } | null)?.type;
      throw new TypeError(`Unknown WireMessage type '${String(type)}'`);
    }
  }
}

function writeEntry(w: Writer, e: WriteBackEntry): void {
  if (typeof e !== "object" || e === null) {
    throw new TypeError("Field 'WriteBackEntry' must be an object");
  }
  w.u64(e.local_seq, "WriteBackEntry.local_seq");
  w.string(e.filepath, "WriteBackEntry.filepath");
  const op = e.operation;
  switch (op?.type) {
    case "Write":
      w.u32(0);
      break;
    case "Delete":
      w.u32(1);
      break;
    case "Rename":
      w.u32(2);
      w.string(op.new_path, "WriteOperation.Rename.new_path");
      break;
    case "Chmod":
      w.u32(3);
      break;
    default: {
      const type: unknown = (op as { type?: unknown } | null | undefined)?.type;
      throw new TypeError(`Unknown WriteOperation type '${String(type)}'`);
    }
  }
  w.tag(e.content_hash !== null);
  if (e.content_hash !== null) w.string(e.content_hash, "WriteBackEntry.content_hash");
  w.tag(e.content_bytes !== null);
  if (e.content_bytes !== null) w.byteVec(e.content_bytes, "WriteBackEntry.content_bytes");
  w.i64(e.size, "WriteBackEntry.size");
  w.i64(e.permissions, "WriteBackEntry.permissions");
  w.bool(e.is_deletion, "WriteBackEntry.is_deletion");
  w.i64(e.master_rowid_seen, "WriteBackEntry.master_rowid_seen");
}
