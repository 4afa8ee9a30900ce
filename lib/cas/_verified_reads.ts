/**
 * Reading content out of the store, verified: a whole object checked against its hash,
 * or each chunk checked (hash and size) before it is handed on and the whole hashed at
 * the end; writing it to a file atomically; and recording a manifest only once its
 * chunks are read back and hash to the content. Missing objects are read through the
 * tier. Internal to `lib/cas`.
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { ChunkManifest } from "./types.ts";
import { CHUNKING_THRESHOLD } from "./types.ts";
import { assertBytesHash } from "./content_hash.ts";
import { ContentNotFoundError, CorruptContentError } from "./errors.ts";
import { manifestProblem } from "./manifest_problem.ts";
import type { WriteToOptions } from "./options.ts";
import type { LocalStore } from "./_local_store.ts";
import { manifestFromTier, objectFromTier } from "./_tier_reads.ts";
import { putHashed } from "./_chunked_writes.ts";
import { isCrossDevice, type PreparedFile, prepareFileAtomic, tempBeside } from "../disk/mod.ts";

/** Options of {@linkcode contentPieces}. */
export interface ContentPiecesOptions {
  /**
   * The caller hands nothing on before the last piece is read (it gathers them, or writes
   * a temp file it removes on an error): chunks are then not hashed one by one, since the
   * whole is. On a mismatch they are read again, verified, to find (and remove) the bad
   * one. @default {false}
   */
  wholeBeforeUse?: boolean;
}

/** Verified pieces of a content: the whole object, or each chunk then a whole-hash check. */
export async function* contentPieces(
  store: LocalStore,
  hash: string,
  options: ContentPiecesOptions = {},
): AsyncGenerator<Uint8Array> {
  // What is here first, whole or in chunks; only then the tier, whole or in chunks.
  let whole = await store.readObject(hash);
  let manifest = whole === null ? await store.readManifest(hash) : null;
  if (whole === null && manifest === null) {
    whole = await objectFromTier(store, hash);
    manifest = whole === null
      ? await manifestFromTier(store, hash, (hash, found) => recordManifest(store, hash, found))
      : null;
  }
  if (whole !== null) {
    yield whole;
    return;
  }
  if (manifest === null) throw new ContentNotFoundError(hash);
  const verifyChunks = !(options.wholeBeforeUse ?? false);
  const hasher = createHash("sha256");
  for await (const piece of chunkPieces(store, hash, manifest, verifyChunks)) {
    hasher.update(piece);
    yield piece;
  }
  const actual = hasher.digest("hex");
  if (actual !== hash) await throwForChunks(store, hash, manifest, actual, verifyChunks);
}

/**
 * Each chunk of a manifest, read and (unless `verify` is false, when the caller hashes the
 * whole) verified before it is yielded; its size is always checked. A size that differs
 * from the manifest's blames the manifest of `hash`, not the chunk.
 */
async function* chunkPieces(
  store: LocalStore,
  hash: string,
  manifest: ChunkManifest,
  verify = true,
): AsyncGenerator<Uint8Array> {
  for (const ref of manifest.chunks) {
    const bytes = await store.readObject(ref.hash, { verify }) ??
      await objectFromTier(store, ref.hash);
    if (bytes === null) throw new ContentNotFoundError(ref.hash, "Chunk");
    if (bytes.length !== ref.size) {
      // Read unverified: a damaged (say truncated) chunk is blamed, and removed, first.
      if (!verify) await store.readObject(ref.hash);
      throw new CorruptContentError(
        hash,
        null,
        `chunk "${ref.hash}" has "${bytes.length}" bytes but its manifest says "${ref.size}"`,
      );
    }
    yield bytes;
  }
}

/**
 * Throws for chunks that did not hash to the whole `hash`: when they were read unverified,
 * they are read again verified first, so a damaged chunk is reported (and removed, to be
 * fetched again) as it would have been; else the whole's mismatch.
 */
async function throwForChunks(
  store: LocalStore,
  hash: string,
  manifest: ChunkManifest,
  actual: string,
  verified: boolean,
): Promise<never> {
  if (!verified) { for await (const _ of chunkPieces(store, hash, manifest)) { /* verified */ } }
  throw new CorruptContentError(hash, actual);
}

/**
 * Records a chunked content once its chunks are stored: they are read back, verified and
 * hashed together before the manifest (only its known fields) is written.
 *
 * @throws {CorruptContentError} When the manifest is malformed or does not tile
 * `total_size`, or the assembled chunks do not hash to `hash`.
 * @throws {ContentNotFoundError} When a chunk is not stored (its `hash` is the chunk's).
 */
export async function recordManifest(
  store: LocalStore,
  hash: string,
  manifest: ChunkManifest,
): Promise<void> {
  const problem = manifestProblem(manifest);
  if (problem !== null) throw new CorruptContentError(hash, null, `invalid manifest: ${problem}`);
  const missing = await store.missingChunks(manifest);
  if (missing.length > 0) throw new ContentNotFoundError(missing[0]!.hash, "Chunk");
  const clean: ChunkManifest = {
    total_size: manifest.total_size,
    chunk_size: manifest.chunk_size,
    chunks: manifest.chunks.map(({ hash, offset, size }) => ({ hash, offset, size })),
  };
  // Chunks stored were verified as they were put: only the whole is hashed here.
  const hasher = createHash("sha256");
  for await (const piece of chunkPieces(store, hash, clean, false)) hasher.update(piece);
  const actual = hasher.digest("hex");
  if (actual !== hash) await throwForChunks(store, hash, clean, actual, false);
  // Its chunks are durable before the manifest that names them: their rows committed (not
  // every row held: content fetched for later is read from memory until its own record).
  store.small?.commitHeld(new Set(clean.chunks.map((chunk) => chunk.hash)));
  await store.syncDeferred({ keepRowsHeld: true });
  await store.writeManifest(hash, clean);
}

/**
 * Writes a content to a file atomically (see `Cas.writeTo`); given bytes are checked
 * against the hash, written without reading the store, then stored too.
 */
export async function writeContentTo(
  store: LocalStore,
  hash: string,
  dest: string,
  options: WriteToOptions,
): Promise<Deno.FileInfo> {
  const prepared = await prepareContentWrite(store, hash, dest, options);
  return await prepared.place();
}

/**
 * The first half of {@linkcode writeContentTo} (see `Cas.prepareWrite`): the content in
 * a temp file; placing it also stores given bytes.
 */
export async function prepareContentWrite(
  store: LocalStore,
  hash: string,
  dest: string,
  options: WriteToOptions,
): Promise<PreparedFile> {
  const bytes = options.bytes;
  if (bytes !== undefined) assertBytesHash(hash, bytes);
  const mode = (options.mode ?? 0o644) & 0o7777;
  const prepare = (temp: string) =>
    // Pieces go to a temp file, removed when the whole does not hash to `hash`.
    prepareFileAtomic(
      temp,
      dest,
      bytes ?? contentPieces(store, hash, { wholeBeforeUse: true }),
      mode,
      {
        syncFolder: options.syncFolder ?? true,
        visibleFirst: options.visibleFirst ?? false,
        syncFile: options.syncFile ?? true,
        createOnly: options.createOnly ?? false,
        ...(options.beforeReplace ? { beforeReplace: options.beforeReplace } : {}),
      },
    );
  const prepared = await prepare(options.tempInStore ? store.tempPath() : tempBeside(dest));
  return {
    written: prepared.written,
    place: async () => {
      let placed: Deno.FileInfo;
      try {
        placed = await prepared.place();
      } catch (error) {
        // `dest` is on another mount than the store after all (a bind mount, a mounted
        // subfolder): written beside it instead.
        if (!options.tempInStore || !isCrossDevice(error)) throw error;
        const beside = await prepare(tempBeside(dest));
        placed = await beside.place();
      }
      if (bytes === undefined || options.storeBytes === false) return placed;
      if (bytes.length < CHUNKING_THRESHOLD) {
        await store.writeObject(hash, bytes, { deferSync: true });
      } else await putHashed(store, hash, bytes); // chunked, as any large content
      return placed;
    },
  };
}
