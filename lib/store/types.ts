/** File type bits of a POSIX `st_mode`, kept whole in `mode` so type travels with permissions. */
export const S_IFMT = 0o170000;
/** Regular file type bits. */
export const S_IFREG = 0o100000;
/** Symbolic link type bits; a link's content is its target path as UTF-8. */
export const S_IFLNK = 0o120000;
/**
 * Folder type bits. A folder is recorded as an iteration of its own path with these bits
 * in `mode`, size 0 and the empty content's hash (it has no content): so its creation,
 * its permission bits and its removal are versioned and replicated like a file's.
 */
export const S_IFDIR = 0o040000;

/**
 * Whether a full `st_mode` is a folder's.
 *
 * @param mode A full mode (type bits included).
 * @returns `true` for folder type bits.
 * @example
 * ```ts
 * import { isFolderMode } from "./types.ts";
 * if (!isFolderMode(0o040755) || isFolderMode(0o100644)) throw new Error("wrong");
 * ```
 */
export function isFolderMode(mode: number): boolean {
  return (mode & S_IFMT) === S_IFDIR;
}

/** Who made a change: `"local"` for this workspace's own edits, else a replica's sandbox id or `"master"`. */
export type Origin = string;

/** One immutable version of one path. */
export interface Iteration {
  /** Normalized workspace-relative path. */
  path: string;
  /** Per-path number, from 1. */
  iteration: number;
  /** Workspace-wide change number; every iteration takes the next one. */
  sequence: number;
  /** Epoch milliseconds when the change was recorded. */
  timestamp: number;
  /** Byte count of the content (0 for a deletion). */
  size: number;
  /** Lowercase hex SHA-256 of the content (`""` for a deletion). */
  hash: string;
  /** Full POSIX mode including type bits, e.g. `0o100644` (`0o040755` for a folder); 0 for a deletion. */
  mode: number;
  /** True when this iteration records the path's removal. */
  deleted: boolean;
  /** Who made the change: `local`, `api`, `restore`, `rollback` or a sandbox id. */
  origin: Origin;
}

/** A change to record; the store assigns iteration, sequence and (unless given) timestamp. */
export interface NewIteration {
  /** Normalized workspace-relative path. */
  path: string;
  /** Lowercase hex SHA-256 of the content; `""` for a deletion. */
  hash: string;
  /** Content size in bytes. */
  size: number;
  /** Full POSIX mode including type bits. */
  mode: number;
  /** True when this records the path's removal. */
  deleted: boolean;
  /** Who made the change. @default {"local"} */
  origin?: Origin;
  /** Epoch milliseconds. @default {Date.now()} */
  timestamp?: number;
}
