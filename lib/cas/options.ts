/**
 * The options and results of `Cas`'s methods (see `cas.ts`).
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import type { ContentTier } from "./content_tier.ts";

/** Options for {@linkcode Cas.open}. */
export interface CasOptions {
  /**
   * The database that records the hashes stored here (normally the store's). Objects under
   * {@linkcode SMALL_OBJECT_LIMIT} bytes are then kept in its `cas_objects` table: durable
   * with a commit to its write-ahead log, in order with the rows that reference them, with
   * no file to create and flush. Read-only, it is read but not written to.
   */
  db?: DatabaseSync;
  /**
   * Where to look for content this store lacks (see {@linkcode Cas.setTier}).
   *
   * @default {undefined}
   */
  tier?: ContentTier;
}

/** Options for {@linkcode Cas.writeTo}. */
export interface WriteToOptions {
  /** POSIX mode; only its permission bits (`mode & 0o7777`) are applied. @default {0o644} */
  mode?: number;
  /**
   * Whether to fsync the destination's folder once the file is renamed into place. Leave
   * it out only when the caller flushes the folder itself (once for many files).
   * @default {true}
   */
  syncFolder?: boolean;
  /** Rename before fsync (see `AtomicWriteOptions.visibleFirst`). @default {false} */
  visibleFirst?: boolean;
  /** Whether to fsync the file (see `AtomicWriteOptions.syncFile`). @default {true} */
  syncFile?: boolean;
  /**
   * Make the temp file in the store's own `tmp/` folder rather than beside `dest`: whoever
   * watches `dest`'s folder then sees one rename instead of a temp file's creation,
   * writes, close and rename. When `dest` turns out to be on another mount, the file is
   * written beside it. @default {false}
   */
  tempInStore?: boolean;
  /**
   * Only create `dest`: fail with `Deno.errors.AlreadyExists`, touching nothing, when
   * anything is there (see `AtomicWriteOptions.createOnly`). @default {false}
   */
  createOnly?: boolean;
  /**
   * Called right before `dest` is replaced, to refuse the write by throwing when `dest`
   * changed since the caller looked (see `AtomicWriteOptions.beforeReplace`).
   * @default {undefined}
   */
  beforeReplace?: () => void;
  /**
   * The content's bytes, when the caller holds them (a small content that came inline):
   * checked against the hash, written without reading the store, then stored too (made
   * durable by the next {@linkcode Cas.syncDeferred}).
   */
  bytes?: Uint8Array;
  /**
   * Whether given `bytes` are stored once the file is placed: not for a copy of content
   * held elsewhere, whose reads go through the store's tier (see `Cas.setTier`).
   * @default {true}
   */
  storeBytes?: boolean;
}

/** Options for {@linkcode Cas.sweep}. */
export interface SweepOptions {
  /**
   * Epoch milliseconds: files written or re-put at or after it are kept even when not in
   * `keep`. Take it before computing `keep`, so content stored meanwhile survives.
   * @default {Date.now() when the sweep starts}
   */
  keepNewerThan?: number;
}

/**
 * The content hashes a {@linkcode Cas.sweep} keeps: a `Set`, or a `HashPrefixSet` on a
 * large store.
 */
export interface KeptHashes {
  /** Whether `hash` is still referenced. */
  has(hash: string): boolean;
}

/** What {@linkcode Cas.sweep} deleted. */
export interface SweepResult {
  /** Object and manifest files removed. */
  removedObjects: number;
  /** Their bytes on disk. */
  removedBytes: number;
}

/** What the store holds, from {@linkcode Cas.stats}. */
export interface CasStats {
  /** Object files: whole contents and chunks. */
  objects: number;
  /** Manifest files, one per chunked content. */
  manifests: number;
  /** Bytes of all object and manifest files. */
  bytes: number;
}
