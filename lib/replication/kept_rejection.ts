import type { RowReader } from "../db/mod.ts";

/**
 * A write-back entry the master rejected, with the content kept for it: what the
 * replica's {@linkcode Conflict} and the master's {@linkcode MasterConflict} share.
 */
export interface KeptRejection {
  /** Row id. */
  id: number;
  /** The entry's local sequence on the replica that wrote it. */
  localSeq: number;
  /** The path (a rename's source). */
  path: string;
  /** `write`, `delete`, `rename` or `chmod`. */
  operation: string;
  /** The master's reason, e.g. `conflict: "a.txt" changed at sequence 12 by "local" after 9`. */
  reason: string;
  /** Hash of the kept content (`chronicle cat`-able), `null` when there is none (a deletion). */
  keptHash: string | null;
  /** Its size in bytes. */
  keptSize: number;
  /** Its mode. */
  keptMode: number;
  /** Epoch ms of the rejection. */
  createdMs: number;
}

/** The columns of a {@linkcode KeptRejection}, named as its fields, in both tables. */
export const KEPT_REJECTION_COLUMNS = `id, local_seq AS localSeq, path, operation, reason,
  kept_hash AS keptHash, kept_size AS keptSize, kept_mode AS keptMode, created_ms AS createdMs`;

/**
 * Reads a row selected with {@linkcode KEPT_REJECTION_COLUMNS}.
 *
 * @param read The row's reader.
 * @returns The shared fields.
 */
export function readKeptRejection(read: RowReader): KeptRejection {
  return {
    id: read.integer("id"),
    localSeq: read.integer("localSeq"),
    path: read.text("path"),
    operation: read.text("operation"),
    reason: read.text("reason"),
    keptHash: read.textOrNull("keptHash"),
    keptSize: read.integer("keptSize"),
    keptMode: read.integer("keptMode"),
    createdMs: read.integer("createdMs"),
  };
}
