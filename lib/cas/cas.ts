import { resolve } from "node:path";
import type { PreparedFile } from "../disk/mod.ts";
import type { ChunkManifest, ChunkRef, StoredContent } from "./types.ts";
import type { ContentTier } from "./content_tier.ts";
import type {
  CasOptions,
  CasStats,
  KeptHashes,
  SweepOptions,
  SweepResult,
  WriteToOptions,
} from "./options.ts";
import { assertBytesHash, assertContentHash, isContentHash, sha256Hex } from "./content_hash.ts";
import { ContentNotFoundError, CorruptContentError } from "./errors.ts";
import { concat } from "./_files.ts";
import { LocalStore } from "./_local_store.ts";
import { type ObjectRange, readContentRange, readObjectRange } from "./_ranged_reads.ts";
import { putFile, putHashed, putPieces } from "./_chunked_writes.ts";
import {
  contentPieces,
  prepareContentWrite,
  recordManifest,
  writeContentTo,
} from "./_verified_reads.ts";
import { dropChunked, evict, stats, sweep } from "./_sweep.ts";
import { exportManifest, exportObject, importManifest, importObject } from "./_folder_copy.ts";

/**
 * A content-addressed store on disk (PROTOCOL.md §2). Content is named by its SHA-256;
 * content of {@linkcode CHUNKING_THRESHOLD} bytes or more is stored as content-defined
 * chunks plus a manifest, so a small edit stores only a few new chunks.
 *
 * Layout under `root`: `objects/ab/<hash>` raw bytes (whole contents and chunks; every
 * file hashes to its name), `manifests/ab/<hash>.json` for chunked content, `tmp/` for
 * temp files. Opened with a database ({@linkcode CasOptions.db}), objects under
 * {@linkcode SMALL_OBJECT_LIMIT} bytes go to its `cas_objects` table instead; objects are
 * looked up in both places. Every write is atomic and durable (a put with `deferSync` once
 * {@linkcode Cas.syncDeferred} has run); nothing already stored is rewritten.
 * Every read is verified: corrupt bytes are never returned, and a stored file found
 * corrupt is removed so that {@linkcode Cas.has} reports it missing and it can be fetched
 * again.
 *
 * Every `hash` argument must be 64 lowercase hex characters, else `TypeError`.
 *
 * @example Storing and reading content
 * ```ts
 * import { Cas } from "./cas.ts";
 * const root = await Deno.makeTempDir();
 * try {
 *   const cas = await Cas.open(root);
 *   const { hash } = await cas.putBytes(new TextEncoder().encode("hello"));
 *   const text = new TextDecoder().decode(await cas.readBytes(hash));
 *   if (text !== "hello") throw new Error("round trip failed");
 * } finally {
 *   await Deno.remove(root, { recursive: true });
 * }
 * ```
 */
export class Cas {
  /** The store's folder (absolute). */
  readonly root: string;
  readonly #store: LocalStore;

  private constructor(store: LocalStore) {
    this.root = store.root;
    this.#store = store;
  }

  /**
   * Opens the store at `root`, creating its folders if needed, and removes temp files
   * left by writers that are no longer running (a crash mid-write).
   *
   * @param root The store's folder.
   * @param options The database for small objects.
   * @returns The open store.
   * @throws {TypeError} When `root` is empty.
   */
  static async open(root: string, options: CasOptions = {}): Promise<Cas> {
    if (typeof root !== "string" || root === "") throw new TypeError("CAS root must not be empty");
    const store = await LocalStore.open(resolve(root), options.db);
    store.tier = options.tier ?? null;
    return new Cas(store);
  }

  /**
   * Sets (or, with `null`, removes) the tier that reads of content this store lacks fall
   * back to. What the tier answers is verified, then stored here, so each object is
   * fetched once.
   *
   * @param tier The slower store, e.g. an object-store bucket.
   */
  setTier(tier: ContentTier | null): void {
    this.#store.tier = tier;
  }

  /**
   * Tells whether content is stored and readable without fetching: as a whole object, or
   * as a manifest whose chunks are all present.
   *
   * @param hash The content hash.
   * @param options `throughTier`: content not stored here is asked of the tier (see
   * {@linkcode Cas.setTier}), and kept once verified: for a caller about to need it, which
   * then holds it (a restore checking it has every content before it changes anything).
   * @returns `true` when stored (or, with `throughTier`, fetched). Contents are not
   * re-hashed here.
   * @throws What the tier throws (an unreachable tier, corrupt answers), a tier's own kind
   * of {@linkcode ContentNotFoundError} included: that says why it is not there.
   */
  async has(hash: string, options: { throughTier?: boolean } = {}): Promise<boolean> {
    assertContentHash(hash);
    if (await this.#stored(hash)) return true;
    if (!options.throughTier || this.#store.tier === null) return false;
    try {
      for await (const _piece of this.readStream(hash)) { /* kept as it is read */ }
      return true;
    } catch (error) {
      if (error instanceof ContentNotFoundError && error.constructor === ContentNotFoundError) {
        return false; // the tier lacks it too
      }
      throw error;
    }
  }

  async #stored(hash: string): Promise<boolean> {
    if (await this.#store.hasObject(hash)) return true;
    let manifest: ChunkManifest | null;
    try {
      manifest = await this.manifest(hash);
    } catch (error) {
      if (error instanceof CorruptContentError) return false;
      throw error;
    }
    if (manifest === null) return false;
    return (await this.#store.missingChunks(manifest)).length === 0;
  }

  /**
   * Stores bytes under their hash, as chunks plus a manifest when there are at least
   * {@linkcode CHUNKING_THRESHOLD} of them.
   *
   * @param bytes The content.
   * @returns Its hash, size and whether it was chunked.
   */
  putBytes(bytes: Uint8Array): Promise<StoredContent> {
    return putHashed(this.#store, sha256Hex(bytes), bytes);
  }

  /**
   * Stores a file's content. A small file is read once; a large one is read in pieces,
   * hashed and chunked as it is read, and never held whole in memory.
   *
   * @param path The file to store (symlinks are followed; store a link's target text with
   * {@linkcode Cas.putBytes}).
   * @param options `alreadyStored`: a hash the caller knows is stored and referenced (or, on
   * a sandbox replica, held by its master); a file that hashes to it is neither written nor
   * refreshed (re-checking a file that is most likely unchanged then costs one read; a large
   * file is hashed before it is stored, and read again only if it changed). `deferSync`: as for
   * {@linkcode Cas.putVerified}, for content under {@linkcode CHUNKING_THRESHOLD}.
   * @returns Its hash, size and whether it was chunked.
   * @throws {Deno.errors.NotFound} When the file does not exist.
   */
  async putFile(
    path: string,
    options: { alreadyStored?: string; deferSync?: boolean } = {},
  ): Promise<StoredContent> {
    return await putFile(this.#store, path, options);
  }

  /**
   * Stores the bytes of a stream, chunking as they arrive once there are
   * {@linkcode CHUNKING_THRESHOLD} of them. Memory stays bounded by a few chunks (under
   * 20 MiB) whatever the content's size. Nothing is recorded for a stream that errors.
   *
   * @param stream The content, in pieces; a piece may be reused by its producer once the
   * next is requested.
   * @returns Its hash, size and whether it was chunked.
   */
  putStream(stream: ReadableStream<Uint8Array>): Promise<StoredContent> {
    return putPieces(this.#store, stream);
  }

  /**
   * Stores bytes fetched from elsewhere under the hash they were asked for: a whole
   * content or one chunk.
   *
   * @param hash The hash the bytes must have.
   * @param bytes The fetched bytes.
   * @param options `deferSync`: leave the object not yet durable (its folder unflushed, or
   * its row uncommitted) until the next {@linkcode Cas.syncDeferred}, which must run before
   * anything records the hash: many objects then share one flush per folder and one
   * commit. It is readable at once. `readSoon`: the caller reads it again shortly (a
   * replica writes fetched content to its workspace): an object stored as a file keeps its
   * bytes in memory too, within a bound, and is read back from there, not hashed again.
   * @throws {CorruptContentError} When the bytes hash to something else; nothing is written.
   */
  async putVerified(
    hash: string,
    bytes: Uint8Array,
    options: { deferSync?: boolean; readSoon?: boolean } = {},
  ): Promise<void> {
    assertContentHash(hash);
    assertBytesHash(hash, bytes);
    await this.#store.writeObject(hash, bytes, options);
  }

  /**
   * Makes the objects put with `deferSync` durable: commits their rows in one transaction
   * and flushes their folders (waiting for flushes already under way).
   *
   * @param options `keepRowsHeld`: flush the folders only, and leave the rows to
   * {@linkcode Cas.writeHeldRows} inside the caller's transaction.
   */
  async syncDeferred(options: { keepRowsHeld?: boolean } = {}): Promise<void> {
    return await this.#store.syncDeferred(options);
  }

  /**
   * Writes the small objects put with `deferSync` into the transaction the caller has
   * open on the store's database, so that they commit with what references them: one
   * commit instead of two. They stay held (readable, and committed by a later
   * {@linkcode Cas.syncDeferred}) until the caller, once its transaction has committed,
   * calls the returned function; a transaction rolled back loses none of them.
   *
   * @param only Only the rows of these hashes (those the transaction references): the
   * others stay held for their own record. Every held row when missing.
   * @returns Forgets the rows written; to be called once the transaction has committed.
   * @throws {Error} When no transaction is open on the database.
   * @example One commit for the content and its record
   * ```ts ignore
   * await cas.syncDeferred({ keepRowsHeld: true }); // object files flushed
   * let forget = () => {};
   * store.record(changes, states, { alongside: () => (forget = cas.writeHeldRows()) });
   * forget();
   * ```
   */
  writeHeldRows(only?: ReadonlySet<string>): () => void {
    return this.#store.small?.writable ? this.#store.small.writeHeld(only) : () => {};
  }

  /**
   * Records a chunked content received from elsewhere, once its chunks are stored (see
   * {@linkcode Cas.missingChunks} and {@linkcode Cas.putVerified}). The chunks are read
   * back, verified and hashed together before the manifest is written.
   *
   * @param hash The whole content's hash.
   * @param manifest How it is assembled.
   * @throws {CorruptContentError} When the manifest is malformed or does not tile
   * `total_size`, or the assembled chunks do not hash to `hash`.
   * @throws {ContentNotFoundError} When a chunk is not stored (its `hash` is the chunk's).
   */
  async putManifest(hash: string, manifest: ChunkManifest): Promise<void> {
    assertContentHash(hash);
    await recordManifest(this.#store, hash, manifest);
  }

  /**
   * Reads the manifest of a chunked content.
   *
   * @param hash The content hash.
   * @returns The manifest, or `null` when the content is stored whole or not at all.
   * @throws {CorruptContentError} When the stored manifest is unreadable (it is removed).
   */
  async manifest(hash: string): Promise<ChunkManifest | null> {
    assertContentHash(hash);
    return await this.#store.readManifest(hash);
  }

  /**
   * Lists the chunks of a manifest that are not stored yet, each hash once, in order.
   *
   * @param manifest A manifest, typically just received.
   * @returns The chunks to fetch.
   * @throws {TypeError} When the manifest is malformed.
   */
  async missingChunks(manifest: ChunkManifest): Promise<ChunkRef[]> {
    return await this.#store.missingChunks(manifest);
  }

  /**
   * Reads a whole content into memory, verified against its hash. Meant for small
   * contents; use {@linkcode Cas.readStream} or {@linkcode Cas.writeTo} for large ones.
   *
   * @param hash The content hash.
   * @returns The content.
   * @throws {ContentNotFoundError} When the content or one of its chunks is not stored.
   * @throws {CorruptContentError} When stored bytes do not match their hash.
   */
  async readBytes(hash: string): Promise<Uint8Array> {
    assertContentHash(hash);
    const pieces: Uint8Array[] = [];
    const whole = { wholeBeforeUse: true }; // nothing is returned unless the whole matches
    for await (const piece of contentPieces(this.#store, hash, whole)) pieces.push(piece);
    return pieces.length === 1 ? pieces[0]! : concat(pieces);
  }

  /**
   * Streams a content in verified pieces: each chunk (or the whole unchunked object) is
   * checked against its hash before it is yielded, so corrupt bytes are never emitted. For
   * chunked content the whole is hashed too, and a mismatch errors the stream at its end.
   *
   * @param hash The content hash.
   * @returns The content's pieces; the stream errors with {@linkcode ContentNotFoundError}
   * or {@linkcode CorruptContentError}.
   * @throws {TypeError} At once, when `hash` is malformed.
   */
  readStream(hash: string): ReadableStream<Uint8Array> {
    assertContentHash(hash);
    return ReadableStream.from(contentPieces(this.#store, hash));
  }

  /**
   * Writes a content to a file atomically: a temp file beside `dest` (named
   * `.<name>.<pid>-<uuid>.chronicle-tmp`, the name cut to 100 bytes), or in the store's
   * tmp folder with `tempInStore`, receives verified pieces, is fsynced (unless
   * `syncFile: false`), given the permission bits, and renamed over `dest` (linked to it,
   * with `createOnly`); then the folder is fsynced. On any error the temp file is removed
   * and `dest` is untouched. The folder must exist.
   *
   * @param hash The content hash.
   * @param dest The file to create or replace.
   * @param options The permission bits, the folder flush, and the bytes if held.
   * @returns The written file's status, from its own handle (see `writeFileAtomic`).
   * @throws {ContentNotFoundError} When the content or one of its chunks is not stored.
   * @throws {CorruptContentError} When stored or given bytes do not match their hash.
   */
  async writeTo(
    hash: string,
    dest: string,
    options: WriteToOptions = {},
  ): Promise<Deno.FileInfo> {
    assertContentHash(hash);
    return await writeContentTo(this.#store, hash, dest, options);
  }

  /**
   * The first half of {@linkcode Cas.writeTo}: the content written to its temp file, not
   * yet at `dest`. A caller writing many files places them later, together (see
   * `PreparedFile`); given bytes are stored once placed.
   *
   * @param hash The content hash.
   * @param dest The file to create or replace once placed.
   * @param options As {@linkcode Cas.writeTo}'s.
   * @returns The prepared file, to place.
   * @throws {ContentNotFoundError} When the content or one of its chunks is not stored.
   * @throws {CorruptContentError} When stored or given bytes do not match their hash.
   */
  async prepareWrite(
    hash: string,
    dest: string,
    options: WriteToOptions = {},
  ): Promise<PreparedFile> {
    assertContentHash(hash);
    return await prepareContentWrite(this.#store, hash, dest, options);
  }

  /**
   * Reads a content (or chunk) stored whole here, verified, unless it is larger than
   * `maxBytes`: one lookup where {@linkcode Cas.objectSize} then {@linkcode Cas.readBytes}
   * take two. A chunked content is not stored whole (see {@linkcode Cas.manifest}); the
   * tier is not asked.
   *
   * @param hash The content hash.
   * @param maxBytes The most bytes to read.
   * @returns The bytes; `{ tooLarge }` with its size when larger; `null` when not stored
   * whole here.
   * @throws {CorruptContentError} When the stored bytes do not match the hash (the
   * object is removed).
   */
  async readWholeWithin(
    hash: string,
    maxBytes: number,
  ): Promise<Uint8Array | { tooLarge: number } | null> {
    assertContentHash(hash);
    return await this.#store.readObjectWithin(hash, maxBytes);
  }

  /**
   * Reads, together, those of `hashes` stored here as small objects (table rows) of at
   * most `maxBytes`, verified: one read transaction for all, where
   * {@linkcode Cas.readWholeWithin} takes one each. What is left out (stored otherwise,
   * larger, absent, or corrupt) is read one by one as before.
   *
   * @param hashes Content hashes; strings that are not content hashes are left out.
   * @param maxBytes The most bytes of one object.
   * @returns The bytes of each object found, by hash.
   * @example
   * ```ts ignore
   * const rows = cas.readSmallWithin(hashes, 4095);
   * const bytes = rows.get(hash) ?? await cas.readBytes(hash);
   * ```
   */
  readSmallWithin(hashes: Iterable<string>, maxBytes: number): Map<string, Uint8Array> {
    const valid = [...hashes].filter(isContentHash);
    return this.#store.readRowsWithin(valid, maxBytes);
  }

  /**
   * Reads `length` bytes from `offset` of an object stored whole (a content under the
   * chunking threshold, or a chunk), unverified: for a reader that checks the whole it
   * assembles against its hash (a replica's ranged fetch). The cost follows the slice.
   *
   * @returns The bytes (fewer at the object's end) and the object's size; `null` when it
   * is not stored whole here (absent, or chunked).
   */
  readRange(hash: string, offset: number, length: number): ObjectRange | null {
    assertContentHash(hash);
    return readObjectRange(this.#store, hash, offset, length);
  }

  /**
   * Called by the process that just took a data folder's process lock (the daemon): removes
   * the temp files an earlier holder of that lock left behind when it was killed mid-write,
   * at once (any other process's are removed once an hour old), and names this process's
   * own temp files as the holder's from now on, for the next holder to find.
   *
   * @param dataDir The data folder whose lock this process holds (absolute).
   * @returns How many temp files were removed.
   */
  async claimTempFiles(dataDir: string): Promise<number> {
    return await this.#store.claimTempFiles(dataDir);
  }

  /**
   * A fresh path for a temp file in the store's `tmp/` folder, for a caller that builds a
   * file to store (then {@linkcode Cas.putFile}) and removes it. One left behind by a
   * process that ended is removed when the store is opened again.
   */
  tempPath(): string {
    return this.#store.tempPath();
  }

  /**
   * Reads `length` bytes from `offset` of a content stored here, whole or chunked,
   * unverified: for a sender whose receiver checks the whole it assembles (a replica's
   * change sent in pieces). The cost follows the slice. The tier is not asked.
   *
   * @returns The bytes (fewer at the content's end); `null` when the content, or a chunk
   * the slice spans, is not stored here.
   */
  async readContentRange(hash: string, offset: number, length: number): Promise<Uint8Array | null> {
    assertContentHash(hash);
    return await readContentRange(this.#store, hash, offset, length);
  }

  /**
   * Tells a content's size without reading it.
   *
   * @param hash The content hash.
   * @returns The size in bytes (the total for chunked content), or `null` when absent.
   */
  async objectSize(hash: string): Promise<number | null> {
    assertContentHash(hash);
    return await this.#store.contentSize(hash);
  }

  /**
   * Deletes every object and manifest not reachable from `keep`: a kept hash keeps its
   * object, or its manifest and all that manifest's chunks. Files written or re-put at or
   * after `options.keepNewerThan` are kept regardless. Temp files are left to
   * {@linkcode Cas.open}.
   *
   * @param keep Content hashes still referenced; strings that are not content hashes
   * (such as a deletion's `""`) keep nothing.
   * @param options When the caller's view of `keep` was taken.
   * @returns How many files and bytes were removed.
   */
  async sweep(keep: KeptHashes, options: SweepOptions = {}): Promise<SweepResult> {
    return await sweep(this.#store, keep, options);
  }

  /**
   * Removes chunked contents held safely elsewhere (a sandbox replica's copies of the
   * master's, which reads fetch again through the tier): each of `hashes` not named by
   * `kept` loses its manifest, and each of its chunks goes unless another manifest lists it
   * or `kept` names it. Contents stored whole are left alone. The caller keeps anything else
   * from storing contents meanwhile (a content put while this runs may find a chunk it
   * shares gone: it reads it through the tier). Temp files are left to {@linkcode Cas.open}.
   *
   * @param hashes The contents to remove.
   * @param kept Which of the hashes it is given (contents, then chunks) must stay.
   * @returns How many files and rows were removed, and their bytes.
   */
  async dropChunked(
    hashes: readonly string[],
    kept: (hashes: string[]) => ReadonlySet<string>,
  ): Promise<SweepResult> {
    return await dropChunked(this.#store, hashes, kept);
  }

  /**
   * Keeps the object files within `limitBytes` by removing the least recently used ones
   * that `evictable` says are safe elsewhere (in an object-store bucket, where reads
   * fetch them again). Objects kept in the database and manifests are never removed.
   * An object's last use is its file's modification time: set when stored, and moved
   * forward by reads (at most once an hour per object).
   *
   * @param limitBytes The most bytes object files may take.
   * @param evictable Whether an object may go.
   * @returns How many files and bytes were removed.
   */
  async evict(limitBytes: number, evictable: (hash: string) => boolean): Promise<SweepResult> {
    return await evict(this.#store, limitBytes, evictable);
  }

  /**
   * Counts what the store holds.
   *
   * @returns Object and manifest file counts and their total bytes.
   */
  async stats(): Promise<CasStats> {
    return await stats(this.#store);
  }

  /**
   * Tells whether a content (or a chunk) is stored whole, as one object in the database
   * or as a file; unlike {@linkcode Cas.has}, a manifest does not count.
   *
   * @param hash The object's hash.
   * @returns `true` when stored whole. The bytes are not re-hashed here.
   */
  async hasObject(hash: string): Promise<boolean> {
    return await this.#store.hasObject(hash);
  }

  /**
   * Copies one object (a whole content or a chunk) out to a folder laid out like a store,
   * at {@linkcode casObjectPath}: read and verified, written as a new file and fsynced.
   * The folders are left for the caller to fsync (once for many files).
   *
   * @param hash The object's hash.
   * @param folder The folder to write under, e.g. a checkpoint's.
   * @returns The bytes written.
   * @throws {ContentNotFoundError} When the store lacks the object.
   * @throws {CorruptContentError} When the stored bytes do not match the hash.
   * @throws {Deno.errors.AlreadyExists} When the folder holds a file there already.
   */
  async exportObject(hash: string, folder: string): Promise<number> {
    assertContentHash(hash);
    return await exportObject(this.#store, hash, folder);
  }

  /**
   * Copies a chunked content's manifest out to a folder laid out like a store, at
   * {@linkcode casManifestPath}, as {@linkcode Cas.exportObject} does an object.
   *
   * @param hash The whole content's hash.
   * @param folder The folder to write under.
   * @returns The bytes written.
   * @throws {ContentNotFoundError} When the store has no manifest for it.
   * @throws {CorruptContentError} When the stored manifest is unreadable.
   */
  async exportManifest(hash: string, folder: string): Promise<number> {
    assertContentHash(hash);
    return await exportManifest(this.#store, hash, folder);
  }

  /**
   * Stores one object (a whole content or a chunk) found in a folder laid out like a
   * store, at {@linkcode casObjectPath}, once it is verified against its hash.
   *
   * @param folder The folder to read from, e.g. a checkpoint's.
   * @param hash The object's hash.
   * @returns `true` when stored, `false` when the folder has no such object.
   * @throws {CorruptContentError} When the folder's bytes hash to something else; nothing
   * is stored.
   */
  async importObject(folder: string, hash: string): Promise<boolean> {
    assertContentHash(hash);
    return await importObject(this.#store, folder, hash);
  }

  /**
   * Records a chunked content from the manifest found in a folder laid out like a store,
   * at {@linkcode casManifestPath}, as {@linkcode Cas.putManifest} does: its chunks must be
   * stored already.
   *
   * @param folder The folder to read from.
   * @param hash The whole content's hash.
   * @returns `true` when recorded, `false` when the folder has no such manifest.
   * @throws {CorruptContentError} When the manifest is not JSON, is malformed, or its
   * chunks do not hash to `hash`.
   * @throws {ContentNotFoundError} When a chunk is not stored.
   */
  async importManifest(folder: string, hash: string): Promise<boolean> {
    assertContentHash(hash);
    return await importManifest(this.#store, folder, hash);
  }
}
