import { createHash } from "node:crypto";
import type { CapturedFile, SnapshotRecord } from "./types.ts";

/**
 * The fields of a snapshot that its hash covers: everything stored except the hash itself.
 */
export type HashedFields = Omit<SnapshotRecord, "hash">;

/** The chain's head record: newest snapshot and the anchor left by pruning. */
export interface ChainHead {
  /** Number of the newest snapshot, 0 when none was ever recorded. */
  headNumber: number;
  /** Hash of the newest snapshot, `""` when none was ever recorded. */
  headHash: string;
  /** Number of the oldest retained snapshot (1 until pruning). */
  anchorNumber: number;
  /** `previousHash` of the oldest retained snapshot (`""` until pruning). */
  anchorHash: string;
}

/** Tag at the start of every snapshot encoding; a new encoding gets a new tag. */
export const SNAPSHOT_ENCODING_TAG = "chronicle-snapshot-v1";
/** Tag at the start of the head record's encoding. */
export const HEAD_ENCODING_TAG = "chronicle-snapshot-head-v1";

/**
 * The canonical encoding of a snapshot, the exact bytes its hash is taken over. Pure.
 *
 * It is the UTF-8 of the JSON array (no whitespace):
 *
 * ```text
 * ["chronicle-snapshot-v1", number, id, timestamp, action_type, summary, transaction_id,
 *  previous_hash, [[path, state, kind, hash, size, mode], …]]
 * ```
 *
 * - integers in decimal (all are safe integers); `transaction_id` is `""` when there is none;
 * - strings as ECMAScript `JSON.stringify` writes them (`"`, `\` and U+0000–U+001F escaped,
 *   lone surrogates as `\udXXX`, everything else as itself);
 * - files sorted by path in UTF-8 byte order (equal to code point order); each path appears once;
 * - `mode` is the full `st_mode` in decimal (e.g. 33188 for `0o100644`).
 *
 * @param fields Every stored field except the hash.
 * @returns The encoding as a string (hash its UTF-8).
 * @throws {RangeError} When a number is not a safe non-negative integer.
 *
 * @example The first snapshot ever
 * ```ts
 * import { encodeSnapshot } from "./canonical_encoding.ts";
 * const text = encodeSnapshot({
 *   id: "0b6c", number: 1, timestamp: 5, actionType: "write_file", summary: "write_file: a",
 *   transactionId: null, previousHash: "", files: [],
 * });
 * if (text !== '["chronicle-snapshot-v1",1,"0b6c",5,"write_file","write_file: a","","",[]]') {
 *   throw new Error(text);
 * }
 * ```
 */
export function encodeSnapshot(fields: HashedFields): string {
  const files = sortFiles(fields.files).map((file) => [
    file.path,
    file.state,
    file.kind,
    file.hash,
    integer(file.size, "size"),
    integer(file.mode, "mode"),
  ]);
  return JSON.stringify([
    SNAPSHOT_ENCODING_TAG,
    integer(fields.number, "number"),
    fields.id,
    integer(fields.timestamp, "timestamp"),
    fields.actionType,
    fields.summary,
    fields.transactionId ?? "",
    fields.previousHash,
    files,
  ]);
}

/**
 * A snapshot's hash: lowercase hex SHA-256 of the UTF-8 of {@linkcode encodeSnapshot}. Pure.
 *
 * @param fields Every stored field except the hash.
 * @returns 64 lowercase hex characters.
 */
export function snapshotHash(fields: HashedFields): string {
  return sha256Text(encodeSnapshot(fields));
}

/**
 * The seal of the chain's head record: SHA-256 of the UTF-8 of
 * `["chronicle-snapshot-head-v1", head_number, head_hash, anchor_number, anchor_hash]`. Pure.
 *
 * @param head The head record's fields.
 * @returns 64 lowercase hex characters.
 */
export function headSeal(head: ChainHead): string {
  return sha256Text(JSON.stringify([
    HEAD_ENCODING_TAG,
    integer(head.headNumber, "head number"),
    head.headHash,
    integer(head.anchorNumber, "anchor number"),
    head.anchorHash,
  ]));
}

/**
 * Sorts captured files by path in UTF-8 byte order (code point order), as the encoding needs. Pure.
 *
 * @param files Files in any order.
 * @returns A new sorted array.
 */
export function sortFiles(files: readonly CapturedFile[]): CapturedFile[] {
  return [...files].sort((a, b) => comparePaths(a.path, b.path));
}

/**
 * Compares two strings by code point (the order of their UTF-8 bytes). Pure.
 *
 * @returns Negative, zero or positive, as for `Array.prototype.sort`.
 */
export function comparePaths(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

function sha256Text(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

function integer(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`Snapshot field "${name}" must be a non-negative integer, not ${value}`);
  }
  return value;
}
