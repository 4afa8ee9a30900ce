import type { WireMessage, WireMessageType, WriteBackEntry, WriteOperation } from "./types.ts";
import { WIRE_MESSAGE_TYPES } from "./types.ts";
import { Reader } from "./_reader.ts";
import { WireError } from "./wire_error.ts";

/** Fewest payload bytes one `WriteBackEntry` takes. */
const MIN_ENTRY = 8 + 8 + 4 + 1 + 1 + 8 + 8 + 1 + 8;

/**
 * Decodes one bincode payload (no length header) strictly: an unknown variant index, a
 * bool or Option tag other than 0/1, invalid UTF-8, a length running past the payload, a
 * payload ending inside a field, and bytes left over after the message are all refused.
 *
 * Byte vectors (`inline_content`, `content`, `content_bytes`) are zero-copy views that
 * alias `payload`: do not reuse or modify that buffer while the message is in use, or
 * copy them (`slice()`) to keep them.
 *
 * @param payload One whole payload.
 * @returns The message.
 * @throws {WireError} Malformed bytes; `code` says which problem, the message where.
 *
 * @example Decoding an Ack
 * ```ts
 * import { deepStrictEqual } from "node:assert/strict";
 * import { decodeMessage } from "./mod.ts";
 *
 * const msg = decodeMessage(new Uint8Array([6, 0, 0, 0, 17, 0, 0, 0, 0, 0, 0, 0]));
 * deepStrictEqual(msg, { type: "Ack", up_to_sequence: 17n });
 * ```
 */
export function decodeMessage(payload: Uint8Array): WireMessage {
  const r = new Reader(payload);
  const msg = readMessage(r);
  if (r.remaining !== 0) {
    throw new WireError(
      "trailing_bytes",
      `Found '${r.remaining}' trailing bytes after a whole '${msg.type}' message at byte ${r.position}`,
    );
  }
  return msg;
}

function readMessage(r: Reader): WireMessage {
  const type: WireMessageType = WIRE_MESSAGE_TYPES[r.variant(12, "WireMessage")]!;
  switch (type) {
    case "Notification": {
      const sequence = r.u64("Notification.sequence");
      const filepath = r.string("Notification.filepath");
      const content_hash = r.string("Notification.content_hash");
      const size = r.u64("Notification.size");
      const permissions = r.i64("Notification.permissions");
      const is_deletion = r.bool("Notification.is_deletion");
      const inline_content = r.option("Notification.inline_content")
        ? r.byteVec("Notification.inline_content")
        : null;
      return {
        type,
        sequence,
        filepath,
        content_hash,
        size,
        permissions,
        is_deletion,
        inline_content,
      };
    }
    case "Heartbeat": {
      const agent_sequence = r.u64("Heartbeat.agent_sequence");
      const agent_iteration = r.i64("Heartbeat.agent_iteration");
      return { type, agent_sequence, agent_iteration };
    }
    case "WriteBack": {
      const sandbox_id = r.string("WriteBack.sandbox_id");
      const count = r.length("WriteBack.entries", MIN_ENTRY);
      const entries: WriteBackEntry[] = [];
      for (let i = 0; i < count; i++) entries.push(readEntry(r));
      return { type, sandbox_id, entries };
    }
    case "WriteBackResult": {
      const accepted: [bigint, bigint][] = [];
      const nAccepted = r.length("WriteBackResult.accepted", 16);
      for (let i = 0; i < nAccepted; i++) {
        const seq = r.u64("WriteBackResult.accepted.0");
        accepted.push([seq, r.i64("WriteBackResult.accepted.1")]);
      }
      const rejected: [bigint, string][] = [];
      const nRejected = r.length("WriteBackResult.rejected", 16);
      for (let i = 0; i < nRejected; i++) {
        const seq = r.u64("WriteBackResult.rejected.0");
        rejected.push([seq, r.string("WriteBackResult.rejected.1")]);
      }
      return { type, accepted, rejected };
    }
    case "BarrierRequest":
      return { type, sequence: r.u64("BarrierRequest.sequence") };
    case "BarrierConfirmation": {
      const satisfied = r.bool("BarrierConfirmation.satisfied");
      const current_sequence = r.u64("BarrierConfirmation.current_sequence");
      return { type, satisfied, current_sequence };
    }
    case "Ack":
      return { type, up_to_sequence: r.u64("Ack.up_to_sequence") };
    case "ContentFetchRequest":
      return { type, content_hash: r.string("ContentFetchRequest.content_hash") };
    case "ContentFetchResponse": {
      const content_hash = r.string("ContentFetchResponse.content_hash");
      const content = r.byteVec("ContentFetchResponse.content");
      const size = r.u64("ContentFetchResponse.size");
      const chunk_manifest = r.option("ContentFetchResponse.chunk_manifest")
        ? r.string("ContentFetchResponse.chunk_manifest")
        : null;
      return { type, content_hash, content, size, chunk_manifest };
    }
    case "ContentNotFound":
      return { type, content_hash: r.string("ContentNotFound.content_hash") };
    case "CatchupRequest": {
      const sandbox_id = r.string("CatchupRequest.sandbox_id");
      const since_sequence = r.u64("CatchupRequest.since_sequence");
      return { type, sandbox_id, since_sequence };
    }
    case "FullResyncRequired": {
      const reason = r.string("FullResyncRequired.reason");
      const current_sequence = r.u64("FullResyncRequired.current_sequence");
      return { type, reason, current_sequence };
    }
  }
}

function readEntry(r: Reader): WriteBackEntry {
  const local_seq = r.u64("WriteBackEntry.local_seq");
  const filepath = r.string("WriteBackEntry.filepath");
  let operation: WriteOperation;
  switch (r.variant(4, "WriteOperation")) {
    case 0:
      operation = { type: "Write" };
      break;
    case 1:
      operation = { type: "Delete" };
      break;
    case 2:
      operation = { type: "Rename", new_path: r.string("WriteOperation.Rename.new_path") };
      break;
    default:
      operation = { type: "Chmod" };
  }
  const content_hash = r.option("WriteBackEntry.content_hash")
    ? r.string("WriteBackEntry.content_hash")
    : null;
  const content_bytes = r.option("WriteBackEntry.content_bytes")
    ? r.byteVec("WriteBackEntry.content_bytes")
    : null;
  const size = r.i64("WriteBackEntry.size");
  const permissions = r.i64("WriteBackEntry.permissions");
  const is_deletion = r.bool("WriteBackEntry.is_deletion");
  const master_rowid_seen = r.i64("WriteBackEntry.master_rowid_seen");
  return {
    local_seq,
    filepath,
    operation,
    content_hash,
    content_bytes,
    size,
    permissions,
    is_deletion,
    master_rowid_seen,
  };
}
