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

/**
 * Who made a change: one of {@linkcode ORIGINS} (`"local"` for what the scan or watcher saw
 * on disk, `"api"`, `"restore"`, `"rollback"`, and on a replica `"master"`), or the sandbox
 * id of the replica whose write-back the master accepted.
 */
export type Origin = string;

/**
 * The origins Chronicle itself gives iterations. A replica's sandbox id may be none of
 * these (nor {@linkcode RESERVED_ORIGINS}), so a write-back is never taken for one of them.
 */
export const ORIGINS = {
  /** Seen on disk by the scan or the watcher: an edit nobody told Chronicle about. */
  local: "local",
  /** Written through the REST API (`PUT`/`DELETE /files/…`) or MCP. */
  api: "api",
  /** Brought back by `chronicle restore` (one path, or a point-in-time restore). */
  restore: "restore",
  /** Put back by a snapshot rollback (of one snapshot or of a transaction). */
  rollback: "rollback",
  /** On a replica: applied from the master. */
  master: "master",
  /** On a local-sync replica: a merge left with conflict markers for a person to edit. */
  localSyncMerge: "local-sync-merge",
} as const;

/** Every origin name a sandbox id may not take. */
export const RESERVED_ORIGINS: readonly string[] = Object.values(ORIGINS);

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
  /** Who made the change (see {@linkcode Origin}). */
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

/**
 * Where `Store.addHashesTo` and other referrers of content put the hashes they
 * reference: a `Set`, or a CAS sweep's `HashPrefixSet`.
 */
export interface HashCollector {
  /** Takes one hash. */
  add(hash: string): unknown;
}
