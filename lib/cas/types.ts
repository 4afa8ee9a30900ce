/** One piece of a chunked file (PROTOCOL.md §2). */
export interface ChunkRef {
  /** Lowercase hex SHA-256 of the chunk's bytes. */
  hash: string;
  /** Byte offset of the chunk in the whole file. */
  offset: number;
  /** Byte count of the chunk. */
  size: number;
}

/** How a file of 4 MiB or more is assembled from chunks; sent as JSON on the wire. */
export interface ChunkManifest {
  /** Size of the whole content in bytes. */
  total_size: number;
  /** The chunker's average chunk size, for information only: receivers rely on `chunks`. */
  chunk_size: number;
  /** The chunks in content order; their sizes add up to `total_size`. */
  chunks: ChunkRef[];
}

/** What the CAS holds for one stored content. */
export interface StoredContent {
  /** Lowercase hex SHA-256 of the whole content. */
  hash: string;
  /** Size of the whole content in bytes. */
  size: number;
  /** True when stored as chunks plus a manifest (content of 4 MiB and more). */
  chunked: boolean;
}

/** Files at or above this size are stored as content-defined chunks. */
export const CHUNKING_THRESHOLD = 4 * 1024 * 1024;

/** The SHA-256 of no bytes: the hash of every empty file. */
export const EMPTY_HASH = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/**
 * Name ending of the temp files `Cas.writeTo` makes beside a destination
 * (`.<name>.<pid>-<uuid>.chronicle-tmp`): watchers should ignore such files. Defined in
 * `lib/disk`, which makes those names.
 */
export { WORKSPACE_TEMP_SUFFIX } from "../disk/mod.ts";
