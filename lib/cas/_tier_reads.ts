/**
 * The read-through to a slower tier (see `ContentTier`): what the store lacks is fetched,
 * verified, and stored here, so each object is fetched once; nothing the tier answers is
 * trusted. Internal to `lib/cas`.
 *
 * @module
 */
import type { ChunkManifest } from "./types.ts";
import { sha256Hex } from "./content_hash.ts";
import { ContentNotFoundError, CorruptContentError } from "./errors.ts";
import { manifestProblem } from "./manifest_problem.ts";
import type { LocalStore } from "./_local_store.ts";

/**
 * Fetches an object the store lacks from its tier, verifies it and stores it; `null` when
 * there is no tier or it lacks the object too.
 *
 * @throws {CorruptContentError} When the tier's bytes do not match the hash (reported to
 * the tier; never stored or returned).
 */
export async function objectFromTier(store: LocalStore, hash: string): Promise<Uint8Array | null> {
  const tier = store.tier;
  if (tier === null) return null;
  const bytes = await tier.getObject(hash);
  if (bytes === null) return null;
  const actual = sha256Hex(bytes);
  if (actual !== hash) {
    tier.reportCorrupt?.(hash, actual);
    throw new CorruptContentError(
      hash,
      actual,
      `the copy in the content tier hashes to "${actual}"`,
    );
  }
  if (!tier.keepsWhatItAnswers) await store.writeObject(hash, bytes);
  return bytes;
}

/**
 * Fetches a chunk manifest from the tier, then the chunks the store lacks; the manifest
 * is stored by `record` (which verifies it against its chunks) only once every chunk is,
 * so a bad one is never kept.
 *
 * @param record Verifies and stores the manifest (`Cas.putManifest`).
 */
export async function manifestFromTier(
  store: LocalStore,
  hash: string,
  record: (hash: string, manifest: ChunkManifest) => Promise<void>,
): Promise<ChunkManifest | null> {
  const tier = store.tier;
  if (tier === null) return null;
  const value = await tier.getManifest(hash);
  if (value === null) return null;
  const problem = manifestProblem(value);
  if (problem !== null) {
    throw new CorruptContentError(
      hash,
      null,
      `the content tier's manifest is invalid: ${problem}`,
    );
  }
  const manifest = value as ChunkManifest;
  for (const ref of await store.missingChunks(manifest)) {
    if ((await objectFromTier(store, ref.hash)) === null) {
      throw new ContentNotFoundError(ref.hash, "Chunk");
    }
  }
  await record(hash, manifest);
  return manifest;
}
