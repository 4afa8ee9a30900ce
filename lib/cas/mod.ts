/**
 * The content-addressable store: content named by its SHA-256, large content split by
 * content-defined chunking (FastCDC) so an edit stores only a few new chunks, durable
 * atomic writes, and reads that never return corrupt bytes (PROTOCOL.md §2).
 *
 * @module
 */
export { Cas } from "./cas.ts";
export type { PreparedFile } from "../disk/mod.ts";
export type {
  CasOptions,
  CasStats,
  KeptHashes,
  SweepOptions,
  SweepResult,
  WriteToOptions,
} from "./options.ts";
export { casManifestPath, casObjectPath } from "./layout.ts";
export {
  CHUNK_AVERAGE_SIZE,
  CHUNK_MAX_SIZE,
  CHUNK_MIN_SIZE,
  chunkBoundaries,
  Chunker,
} from "./chunker.ts";
export { assertBytesHash, assertContentHash, isContentHash, sha256Hex } from "./content_hash.ts";
export { ContentNotFoundError, CorruptContentError } from "./errors.ts";
export type { ContentTier } from "./content_tier.ts";
export { type FileHash, hashFile } from "./hash_file.ts";
export { HashPrefixSet } from "./hash_prefix_set.ts";
export { manifestProblem } from "./manifest_problem.ts";
export { SMALL_OBJECT_LIMIT } from "./small_objects.ts";
export type { ObjectRange } from "./_ranged_reads.ts";
export {
  CHUNKING_THRESHOLD,
  type ChunkManifest,
  type ChunkRef,
  EMPTY_HASH,
  type StoredContent,
  WORKSPACE_TEMP_SUFFIX,
} from "./types.ts";
