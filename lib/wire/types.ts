/**
 * The replication protocol's messages, field for field as the Rust `WireMessage` enum
 * declares them (PROTOCOL.md §1). Field names keep Rust's snake_case so that
 * the JSON form and the bincode layout map one to one onto these objects.
 *
 * Integer conventions: `u64` and `i64` fields are `bigint`; `Option<T>` is `T | null`;
 * `Vec<u8>` is `Uint8Array`.
 *
 * @module
 */

/** Agent → sandbox: a path changed (variant index 0). */
export interface NotificationMessage {
  /** Variant tag. */
  type: "Notification";
  /** The master's change number (`u64`). */
  sequence: bigint;
  /** Workspace-relative path. */
  filepath: string;
  /** Lowercase hex SHA-256 of the content, empty for a deletion. */
  content_hash: string;
  /** Content size in bytes (`u64`). */
  size: bigint;
  /** Full `st_mode` (`i64`). */
  permissions: bigint;
  /** Whether the path was deleted. */
  is_deletion: boolean;
  /** The content itself for small files, else `null`. */
  inline_content: Uint8Array | null;
}

/** Agent → sandbox: the master's current state (variant index 1). */
export interface HeartbeatMessage {
  /** Variant tag. */
  type: "Heartbeat";
  /** The master's latest sequence (`u64`). */
  agent_sequence: bigint;
  /** The same sequence as `i64`. */
  agent_iteration: bigint;
}

/** Sandbox → agent: a batch of journaled local changes (variant index 2). */
export interface WriteBackMessage {
  /** Variant tag. */
  type: "WriteBack";
  /** The sending replica's identity. */
  sandbox_id: string;
  /** Journaled changes, oldest first. */
  entries: WriteBackEntry[];
}

/** Agent → sandbox: what became of a write-back batch (variant index 3). */
export interface WriteBackResultMessage {
  /** Variant tag. */
  type: "WriteBackResult";
  /** `(local_seq: u64, master_iteration: i64)` pairs. */
  accepted: [bigint, bigint][];
  /** `(local_seq: u64, reason)` pairs. */
  rejected: [bigint, string][];
}

/** Sandbox → agent: has the master reached `sequence`? (variant index 4). */
export interface BarrierRequestMessage {
  /** Variant tag. */
  type: "BarrierRequest";
  /** The sequence to wait for (`u64`). */
  sequence: bigint;
}

/** Agent → sandbox: the answer to a barrier request (variant index 5). */
export interface BarrierConfirmationMessage {
  /** Variant tag. */
  type: "BarrierConfirmation";
  /** Whether the requested sequence was reached. */
  satisfied: boolean;
  /** The master's sequence when answering (`u64`). */
  current_sequence: bigint;
}

/** Sandbox → agent: cumulative acknowledgement (variant index 6). */
export interface AckMessage {
  /** Variant tag. */
  type: "Ack";
  /** Highest sequence applied (`u64`). */
  up_to_sequence: bigint;
}

/** Sandbox → agent: send the content with this hash (variant index 7). */
export interface ContentFetchRequestMessage {
  /** Variant tag. */
  type: "ContentFetchRequest";
  /** Lowercase hex SHA-256 of the wanted bytes. */
  content_hash: string;
}

/** Agent → sandbox: requested content (variant index 8). */
export interface ContentFetchResponseMessage {
  /** Variant tag. */
  type: "ContentFetchResponse";
  /** Hash of the content. */
  content_hash: string;
  /** The bytes; empty when `chunk_manifest` is set. */
  content: Uint8Array;
  /** Total size in bytes (`u64`). */
  size: bigint;
  /** JSON `ChunkManifest` for chunked content, else `null`. */
  chunk_manifest: string | null;
}

/** Agent → sandbox: no content has this hash (variant index 9). */
export interface ContentNotFoundMessage {
  /** Variant tag. */
  type: "ContentNotFound";
  /** The hash that was asked for. */
  content_hash: string;
}

/** Sandbox → agent: replay changes after `since_sequence` (variant index 10). */
export interface CatchupRequestMessage {
  /** Variant tag. */
  type: "CatchupRequest";
  /** The requesting replica's identity. */
  sandbox_id: string;
  /** Highest sequence already applied, 0 when new (`u64`). */
  since_sequence: bigint;
}

/** Agent → sandbox: catch-up impossible, reconcile from scratch (variant index 11). */
export interface FullResyncRequiredMessage {
  /** Variant tag. */
  type: "FullResyncRequired";
  /** Why catch-up is impossible. */
  reason: string;
  /** The master's sequence (`u64`). */
  current_sequence: bigint;
}

/** Every replication message, discriminated by `type`. */
export type WireMessage =
  | NotificationMessage
  | HeartbeatMessage
  | WriteBackMessage
  | WriteBackResultMessage
  | BarrierRequestMessage
  | BarrierConfirmationMessage
  | AckMessage
  | ContentFetchRequestMessage
  | ContentFetchResponseMessage
  | ContentNotFoundMessage
  | CatchupRequestMessage
  | FullResyncRequiredMessage;

/** The name of a `WireMessage` variant. */
export type WireMessageType = WireMessage["type"];

/** Variant names in declaration order: a variant's position is its bincode index. */
export const WIRE_MESSAGE_TYPES: readonly WireMessageType[] = Object.freeze([
  "Notification",
  "Heartbeat",
  "WriteBack",
  "WriteBackResult",
  "BarrierRequest",
  "BarrierConfirmation",
  "Ack",
  "ContentFetchRequest",
  "ContentFetchResponse",
  "ContentNotFound",
  "CatchupRequest",
  "FullResyncRequired",
]);

/** What a write-back entry does (variant indexes 0..3 in this order). */
export type WriteOperation =
  | { type: "Write" }
  | { type: "Delete" }
  | { type: "Rename"; new_path: string }
  | { type: "Chmod" };

/** One journaled local change inside a `WriteBack`. */
export interface WriteBackEntry {
  /** The replica's journal sequence, echoed in the result (`u64`). */
  local_seq: bigint;
  /** Workspace-relative path. */
  filepath: string;
  /** What happened to the path. */
  operation: WriteOperation;
  /** Hash of the new content, if any. */
  content_hash: string | null;
  /** The new content, if sent inline. */
  content_bytes: Uint8Array | null;
  /** Content size (`i64`). */
  size: bigint;
  /** Full `st_mode` (`i64`). */
  permissions: bigint;
  /** Whether the path was deleted. */
  is_deletion: boolean;
  /** Master sequence of the path's iteration the replica had applied (`i64`). */
  master_rowid_seen: bigint;
}

/** Largest frame payload in bytes (100 MiB); a larger length header is refused. */
export const MAX_FRAME_PAYLOAD = 104_857_600;

/** Largest `u64`. */
export const U64_MAX: bigint = 0xffff_ffff_ffff_ffffn;
/** Largest `i64`. */
export const I64_MAX: bigint = 0x7fff_ffff_ffff_ffffn;
/** Smallest `i64`. */
export const I64_MIN: bigint = -0x8000_0000_0000_0000n;
