/**
 * Storing content: whole when small, else cut into content-defined chunks written a few
 * at a time while the next are read and hashed, then a manifest once every chunk is
 * stored. Internal to `lib/cas`.
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { ChunkRef, StoredContent } from "./types.ts";
import { CHUNKING_THRESHOLD } from "./types.ts";
import { sha256Hex } from "./content_hash.ts";
import { CHUNK_AVERAGE_SIZE, chunkBoundaries, Chunker } from "./chunker.ts";
import { WriteWindow } from "./_write_window.ts";
import { concat, readPieces, readRest } from "./_files.ts";
import type { LocalStore } from "./_local_store.ts";

/** Chunk writes allowed in flight while the next chunks are read, hashed and cut. */
const WRITES_IN_FLIGHT = 2;
/** Where {@linkcode putFile} reads files under 64 KiB (used synchronously, then copied). */
const SCRATCH = new Uint8Array(64 * 1024 + 1);

/** Options of {@linkcode putFile}. */
export interface PutFileOptions {
  /**
   * A hash known stored and referenced (or held by a replica's master): a file hashing to it
   * is not written again (a large one is hashed before it is stored).
   */
  alreadyStored?: string;
  /** Leave a small content not yet durable until the store's next `syncDeferred`. */
  deferSync?: boolean;
}

/** Stores bytes whose hash the caller has computed: whole, or as chunks plus a manifest. */
export async function putHashed(
  store: LocalStore,
  hash: string,
  bytes: Uint8Array,
  deferSync = false,
): Promise<StoredContent> {
  if (bytes.length < CHUNKING_THRESHOLD) {
    await store.writeObject(hash, bytes, { deferSync });
    return { hash, size: bytes.length, chunked: false };
  }
  const chunks: ChunkRef[] = [];
  const writes = new WriteWindow(WRITES_IN_FLIGHT);
  let offset = 0;
  for (const cut of chunkBoundaries(bytes)) {
    const piece = bytes.subarray(offset, cut);
    const chunkHash = sha256Hex(piece);
    await writes.add(store.writeObject(chunkHash, piece));
    chunks.push({ hash: chunkHash, offset, size: piece.length });
    offset = cut;
  }
  await writes.finish();
  await store.writeManifest(hash, {
    total_size: bytes.length,
    chunk_size: CHUNK_AVERAGE_SIZE,
    chunks,
  });
  return { hash, size: bytes.length, chunked: true };
}

/** Stores a file's content: a small file read once, a large one in pieces (see `Cas.putFile`). */
export async function putFile(
  store: LocalStore,
  path: string,
  options: PutFileOptions,
): Promise<StoredContent> {
  const file = Deno.openSync(path, { read: true });
  try {
    const { size } = file.statSync();
    if (size < CHUNKING_THRESHOLD) {
      // One read for the common case; a file that grew meanwhile is still read whole. A
      // small file is read into one shared buffer: a scan re-reading 100,000 files it
      // already stored then makes no garbage (issue #17). No await until it is copied.
      const read = size === 0 ? new Uint8Array() : readRest(file, size, SCRATCH);
      const hash = sha256Hex(read);
      if (hash === options.alreadyStored && read.length < CHUNKING_THRESHOLD) {
        return { hash, size: read.length, chunked: false };
      }
      const bytes = read.buffer === SCRATCH.buffer ? read.slice() : read;
      return await putHashed(store, hash, bytes, options.deferSync ?? false);
    }
    if (options.alreadyStored !== undefined) {
      // A large file most likely unchanged (see `alreadyStored`) is hashed before anything
      // is written: chunks are not written again, nor is one a sandbox took out of its
      // store put back. Changed, it is read a second time (from the page cache) to store it.
      const hasher = createHash("sha256");
      let read = 0;
      for await (const piece of readPieces(file)) {
        hasher.update(piece);
        read += piece.length;
      }
      const hash = hasher.digest("hex");
      if (hash === options.alreadyStored) {
        return { hash, size: read, chunked: read >= CHUNKING_THRESHOLD };
      }
      file.seekSync(0, Deno.SeekMode.Start);
    }
    return await putPieces(store, readPieces(file));
  } finally {
    file.close();
  }
}

/**
 * Stores content arriving in pieces (a large file, a stream): hashes the whole, and
 * chunks once it is large enough. Nothing is recorded for a source that errors.
 */
export async function putPieces(
  store: LocalStore,
  source: AsyncIterable<Uint8Array>,
): Promise<StoredContent> {
  const hasher = createHash("sha256");
  const chunker = new Chunker();
  const chunks: ChunkRef[] = [];
  const writes = new WriteWindow(WRITES_IN_FLIGHT);
  /** Chunks cut before the content reached the threshold: written only if it does. */
  let held: Uint8Array[] | null = [];
  let total = 0;
  let offset = 0;
  const emit = async (chunk: Uint8Array) => {
    if (held !== null) {
      held.push(chunk);
      return;
    }
    const chunkHash = sha256Hex(chunk);
    await writes.add(store.writeObject(chunkHash, chunk));
    chunks.push({ hash: chunkHash, offset, size: chunk.length });
    offset += chunk.length;
  };
  try {
    for await (const piece of source) {
      hasher.update(piece);
      total += piece.length;
      const done = chunker.push(piece);
      if (held !== null && total >= CHUNKING_THRESHOLD) {
        const early = held;
        held = null;
        for (const chunk of early) await emit(chunk);
      }
      for (const chunk of done) await emit(chunk);
    }
  } catch (error) {
    // Let writes already started finish (or clean up) before reporting the failure.
    await writes.finish().catch(() => {/* the source's error is the one to report */});
    throw error;
  }
  const last = chunker.finish();
  const hash = hasher.digest("hex");
  if (held !== null) {
    if (last !== null) held.push(last);
    await store.writeObject(hash, concat(held));
    return { hash, size: total, chunked: false };
  }
  if (last !== null) await emit(last);
  await writes.finish();
  await store.writeManifest(hash, { total_size: total, chunk_size: CHUNK_AVERAGE_SIZE, chunks });
  return { hash, size: total, chunked: true };
}
