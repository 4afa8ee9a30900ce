import { columns, type Row } from "../db/mod.ts";
import type { Iteration, NewIteration } from "./types.ts";

/** What the scanner last saw of a file on disk. */
export interface FileState {
  /** Normalized workspace-relative path. */
  path: string;
  /** Size in bytes when last hashed. */
  size: number;
  /** Modification time (epoch ms) when last hashed. */
  mtimeMs: number;
  /** Inode number when last hashed. */
  ino: number;
  /** Full POSIX mode when last hashed. */
  mode: number;
  /** Content hash the file had then. */
  hash: string;
}

/** A live path as `Store.liveStatesAfter` reads it. */
export interface LiveState {
  /** Normalized workspace-relative path. */
  path: string;
  /** Its latest iteration's content hash. */
  hash: string;
  /** Its latest iteration's mode. */
  mode: number;
  /** What the scanner last saw of it on disk, or `null`. */
  state: FileState | null;
}

/**
 * An iteration from a row of the `iterations` columns (`COLUMNS`), each column's type
 * checked.
 *
 * @param row The row.
 * @returns The iteration.
 */
export function iterationFromRow(row: Row): Iteration {
  const read = columns(row);
  return {
    path: read.text("path"),
    iteration: read.integer("iteration"),
    sequence: read.integer("sequence"),
    timestamp: read.integer("timestamp"),
    size: read.integer("size"),
    hash: read.text("hash"),
    mode: read.integer("mode"),
    deleted: read.boolean("deleted"),
    origin: read.text("origin"),
  };
}

/** A file state from a row of the `file_state` columns, each column's type checked. */
export function toFileState(row: Row): FileState {
  const read = columns(row);
  return {
    path: read.text("path"),
    size: read.integer("size"),
    mtimeMs: read.number("mtimeMs"),
    ino: read.integer("ino"),
    mode: read.integer("mode"),
    hash: read.text("hash"),
  };
}

/**
 * Whether `change` on top of `previous` changes nothing: the same content and mode, or a
 * deletion of a deleted or unknown path.
 */
export function isSameState(
  previous: Iteration | undefined,
  change: Pick<NewIteration, "hash" | "mode" | "deleted">,
): boolean {
  if (!previous || previous.deleted) return change.deleted;
  return !change.deleted && previous.hash === change.hash && previous.mode === change.mode;
}
