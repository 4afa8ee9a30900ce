import { createHash } from "node:crypto";
import type { DatabaseSync } from "node:sqlite";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { ChunkManifest, ChunkRef, StoredContent } from "./types.ts";
import type { ContentTier } from "./content_tier.ts";
import { CHUNKING_THRESHOLD } from "./types.ts";
import { assertContentHash, isContentHash, sha256Hex } from "./content_hash.ts";
import { ContentNotFoundError, CorruptContentError } from "./errors.ts";
import { CHUNK_AVERAGE_SIZE, chunkBoundaries, Chunker } from "./chunker.ts";
import { manifestProblem } from "./manifest_problem.ts";
import { WriteWindow } from "./_write_window.ts";
import {
  concat,
  freshen,
  ignoreNotFound,
  isFile,
  readPieces,
  readRest,
  removeIfOlder,
  statOrNull,
  walkStore,
} from "./_files.ts";
import { tempOwnerAlive } from "./_atomic.ts";
import { isCrossDevice, syncDir, tempBeside, tempName, writeFileAtomic } from "../disk/mod.ts";
import { forEachLimited } from "../concurrency/mod.ts";
import { SMALL_OBJECT_LIMIT, SmallObjects } from "./small_objects.ts";

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
   * The content's bytes, when the caller holds them (a small content that came inline):
   * checked against the hash, written without reading the store, then stored too (made
   * durable by the next {@linkcode Cas.syncDeferred}).
   */
  bytes?: Uint8Array;
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

/** Chunk writes allowed in flight while the next chunks are read, hashed and cut. */
const WRITES_IN_FLIGHT = 2;

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
  readonly #objects: string;
  readonly #manifests: string;
  readonly #tmp: string;
  /** Fan-out folders known to exist, so most writes skip the mkdir. */
  readonly #dirs = new Set<string>();
  /** Fan-out folders with renames not yet flushed (objects put with `deferSync`). */
  readonly #unsynced = new Set<string>();
  /** The folder flushes under way, which a later {@linkcode Cas.syncDeferred} also waits for. */
  #flushing: Promise<unknown> = Promise.resolve();
  /** The table of small objects, when opened with a database that has or may make it. */
  readonly #small: SmallObjects | null;
  /** Where missing content is looked for, if anywhere. */
  #tier: ContentTier | null = null;

  private constructor(root: string, small: SmallObjects | null) {
    this.root = root;
    this.#small = small;
    this.#objects = join(root, "objects");
    this.#manifests = join(root, "manifests");
    this.#tmp = join(root, "tmp");
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
    const small = options.db ? SmallObjects.open(options.db) : null;
    const cas = new Cas(resolve(root), small);
    cas.#tier = options.tier ?? null;
    for (const dir of [cas.#objects, cas.#manifests, cas.#tmp]) {
      await Deno.mkdir(dir, { recursive: true });
    }
    for await (const entry of Deno.readDir(cas.#tmp)) {
      // A temp file is named for its writer's pid, so one whose process is gone can have
      // no writer. A reused pid only keeps a stale file until a later open.
      if (await tempOwnerAlive(entry.name)) continue;
      await Deno.remove(join(cas.#tmp, entry.name), { recursive: true }).catch(ignoreNotFound);
    }
    return cas;
  }

  /**
   * Sets (or, with `null`, removes) the tier that reads of content this store lacks fall
   * back to. What the tier answers is verified, then stored here, so each object is
   * fetched once.
   *
   * @param tier The slower store, e.g. an object-store bucket.
   */
  setTier(tier: ContentTier | null): void {
    this.#tier = tier;
  }

  /**
   * Tells whether content is stored and readable without fetching: as a whole object, or
   * as a manifest whose chunks are all present.
   *
   * @param hash The content hash.
   * @returns `true` when stored. Contents are not re-hashed here.
   */
  async has(hash: string): Promise<boolean> {
    assertContentHash(hash);
    if (await this.hasObject(hash)) return true;
    let manifest: ChunkManifest | null;
    try {
      manifest = await this.manifest(hash);
    } catch (error) {
      if (error instanceof CorruptContentError) return false;
      throw error;
    }
    if (manifest === null) return false;
    return (await this.missingChunks(manifest)).length === 0;
  }

  /**
   * Stores bytes under their hash, as chunks plus a manifest when there are at least
   * {@linkcode CHUNKING_THRESHOLD} of them.
   *
   * @param bytes The content.
   * @returns Its hash, size and whether it was chunked.
   */
  putBytes(bytes: Uint8Array): Promise<StoredContent> {
    return this.#putHashed(sha256Hex(bytes), bytes);
  }

  /** {@linkcode Cas.putBytes} for bytes whose hash the caller has already computed. */
  async #putHashed(hash: string, bytes: Uint8Array, deferSync = false): Promise<StoredContent> {
    if (bytes.length < CHUNKING_THRESHOLD) {
      await this.#writeObject(hash, bytes, deferSync);
      return { hash, size: bytes.length, chunked: false };
    }
    const chunks: ChunkRef[] = [];
    const writes = new WriteWindow(WRITES_IN_FLIGHT);
    let offset = 0;
    for (const cut of chunkBoundaries(bytes)) {
      const piece = bytes.subarray(offset, cut);
      const chunkHash = sha256Hex(piece);
      await writes.add(this.#writeObject(chunkHash, piece));
      chunks.push({ hash: chunkHash, offset, size: piece.length });
      offset = cut;
    }
    await writes.finish();
    await this.#writeManifest(hash, {
      total_size: bytes.length,
      chunk_size: CHUNK_AVERAGE_SIZE,
      chunks,
    });
    return { hash, size: bytes.length, chunked: true };
  }

  /**
   * Stores a file's content. A small file is read once; a large one is read in pieces,
   * hashed and chunked as it is read, and never held whole in memory.
   *
   * @param path The file to store (symlinks are followed; store a link's target text with
   * {@linkcode Cas.putBytes}).
   * @param options `alreadyStored`: a hash the caller knows is stored and referenced; a
   * small file that hashes to it is neither written nor refreshed (re-checking a file that
   * is most likely unchanged then costs one read). `deferSync`: as for
   * {@linkcode Cas.putVerified}, for content under {@linkcode CHUNKING_THRESHOLD}.
   * @returns Its hash, size and whether it was chunked.
   * @throws {Deno.errors.NotFound} When the file does not exist.
   */
  async putFile(
    path: string,
    options: { alreadyStored?: string; deferSync?: boolean } = {},
  ): Promise<StoredContent> {
    const file = Deno.openSync(path, { read: true });
    try {
      const { size } = file.statSync();
      if (size < CHUNKING_THRESHOLD) {
        // One read for the common case; a file that grew meanwhile is still read whole.
        const bytes = size === 0 ? new Uint8Array() : readRest(file, size);
        if (
          options.alreadyStored !== undefined && bytes.length < CHUNKING_THRESHOLD &&
          sha256Hex(bytes) === options.alreadyStored
        ) {
          return { hash: options.alreadyStored, size: bytes.length, chunked: false };
        }
        return await this.#putHashed(sha256Hex(bytes), bytes, options.deferSync ?? false);
      }
      return await this.#putPieces(readPieces(file));
    } finally {
      file.close();
    }
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
    return this.#putPieces(stream);
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
   * commit. It is readable at once.
   * @throws {CorruptContentError} When the bytes hash to something else; nothing is written.
   */
  async putVerified(
    hash: string,
    bytes: Uint8Array,
    options: { deferSync?: boolean } = {},
  ): Promise<void> {
    assertContentHash(hash);
    const actual = sha256Hex(bytes);
    if (actual !== hash) throw new CorruptContentError(hash, actual);
    await this.#writeObject(hash, bytes, options.deferSync ?? false);
  }

  /**
   * Makes the objects put with `deferSync` durable: commits their rows in one transaction
   * and flushes their folders (waiting for flushes already under way).
   */
  async syncDeferred(): Promise<void> {
    this.#small?.commitHeld();
    const dirs = [...this.#unsynced];
    this.#unsynced.clear();
    const flush = Promise.all([this.#flushing, forEachLimited(dirs, 16, syncDir)]);
    this.#flushing = flush.catch(() => {/* reported to the caller below */});
    await flush;
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
    const problem = manifestProblem(manifest);
    if (problem !== null) throw new CorruptContentError(hash, null, `invalid manifest: ${problem}`);
    const missing = await this.missingChunks(manifest);
    if (missing.length > 0) throw new ContentNotFoundError(missing[0]!.hash, "Chunk");
    const clean: ChunkManifest = {
      total_size: manifest.total_size,
      chunk_size: manifest.chunk_size,
      chunks: manifest.chunks.map(({ hash, offset, size }) => ({ hash, offset, size })),
    };
    const hasher = createHash("sha256");
    for await (const piece of this.#chunkPieces(hash, clean)) hasher.update(piece);
    const actual = hasher.digest("hex");
    if (actual !== hash) throw new CorruptContentError(hash, actual);
    await this.syncDeferred(); // its chunks are durable before the manifest that names them
    await this.#writeManifest(hash, clean);
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
    const path = this.#manifestPath(hash);
    if (!existsSync(path)) return null; // without the cost of a thrown error
    let text: string;
    try {
      text = await Deno.readTextFile(path);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return null;
      throw error;
    }
    let value: unknown;
    let problem: string | null;
    try {
      value = JSON.parse(text);
      problem = manifestProblem(value);
    } catch (error) {
      problem = `manifest is not JSON (${(error as Error).message})`;
    }
    if (problem !== null) {
      await Deno.remove(path).catch(ignoreNotFound);
      throw new CorruptContentError(hash, null, `stored ${problem}`);
    }
    return value as ChunkManifest;
  }

  /**
   * Lists the chunks of a manifest that are not stored yet, each hash once, in order.
   *
   * @param manifest A manifest, typically just received.
   * @returns The chunks to fetch.
   * @throws {TypeError} When the manifest is malformed.
   */
  async missingChunks(manifest: ChunkManifest): Promise<ChunkRef[]> {
    const problem = manifestProblem(manifest);
    if (problem !== null) throw new TypeError(`Invalid chunk manifest: ${problem}`);
    const seen = new Set<string>();
    const missing: ChunkRef[] = [];
    for (const ref of manifest.chunks) {
      if (seen.has(ref.hash)) continue;
      seen.add(ref.hash);
      if (!(await this.hasObject(ref.hash))) missing.push(ref);
    }
    return missing;
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
    for await (const piece of this.#pieces(hash)) pieces.push(piece);
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
    return ReadableStream.from(this.#pieces(hash));
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
    const bytes = options.bytes;
    if (bytes !== undefined) {
      const actual = sha256Hex(bytes);
      if (actual !== hash) throw new CorruptContentError(hash, actual);
    }
    const mode = (options.mode ?? 0o644) & 0o7777;
    const write = (temp: string) =>
      writeFileAtomic(temp, dest, bytes ?? this.#pieces(hash), mode, {
        syncFolder: options.syncFolder ?? true,
        visibleFirst: options.visibleFirst ?? false,
        syncFile: options.syncFile ?? true,
        createOnly: options.createOnly ?? false,
      });
    const written = options.tempInStore
      ? await write(join(this.#tmp, tempName())).catch((error) => {
        // `dest` is on another mount than the store after all (a bind mount, a mounted
        // subfolder): written beside it instead.
        if (!isCrossDevice(error)) throw error;
        return write(tempBeside(dest));
      })
      : await write(tempBeside(dest));
    if (bytes === undefined) return written;
    if (bytes.length < CHUNKING_THRESHOLD) await this.#writeObject(hash, bytes, true);
    else await this.#putHashed(hash, bytes); // chunked, as any large content
    return written;
  }

  /**
   * Tells a content's size without reading it.
   *
   * @param hash The content hash.
   * @returns The size in bytes (the total for chunked content), or `null` when absent.
   */
  async objectSize(hash: string): Promise<number | null> {
    assertContentHash(hash);
    const small = this.#small?.size(hash);
    if (small != null) return small;
    const info = await statOrNull(this.#objectPath(hash));
    if (info?.isFile) return info.size;
    try {
      return (await this.manifest(hash))?.total_size ?? null;
    } catch (error) {
      if (error instanceof CorruptContentError) return null;
      throw error;
    }
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
  async sweep(keep: Set<string>, options: SweepOptions = {}): Promise<SweepResult> {
    const cutoff = options.keepNewerThan ?? Date.now();
    const keptObjects = new Set<string>();
    for (const hash of keep) if (isContentHash(hash)) keptObjects.add(hash);
    const result: SweepResult = { removedObjects: 0, removedBytes: 0 };
    const manifestFiles: { hash: string; path: string; info: Deno.FileInfo }[] = [];
    for await (const file of walkStore(this.#manifests, ".json")) manifestFiles.push(file);
    for (const { hash, path, info } of manifestFiles) {
      // A manifest kept by `keep` or by its age keeps its chunks, which may be older.
      if (keep.has(hash) || !(await removeIfOlder(path, info, cutoff))) {
        let manifest: ChunkManifest | null = null;
        try {
          manifest = await this.manifest(hash);
        } catch (error) {
          if (!(error instanceof CorruptContentError)) throw error;
          // manifest() removed the unreadable file; its chunks are reachable no more.
          result.removedObjects++;
          result.removedBytes += info.size;
        }
        for (const ref of manifest?.chunks ?? []) keptObjects.add(ref.hash);
      } else {
        result.removedObjects++;
        result.removedBytes += info.size;
      }
    }
    for await (const { hash, path, info } of walkStore(this.#objects, "")) {
      // RACE: an object re-put after the walk read its mtime and before the removal is
      // lost; removeIfOlder re-reads the mtime just before removing to make this narrow.
      if (keptObjects.has(hash)) continue;
      if (await removeIfOlder(path, info, cutoff)) {
        result.removedObjects++;
        result.removedBytes += info.size;
      }
    }
    if (this.#small?.writable) {
      const small = this.#small.sweep(keptObjects, cutoff);
      result.removedObjects += small.removed;
      result.removedBytes += small.bytes;
    }
    return result;
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
    const files: { hash: string; path: string; info: Deno.FileInfo }[] = [];
    let total = 0;
    for await (const file of walkStore(this.#objects, "")) {
      files.push(file);
      total += file.info.size;
    }
    const result: SweepResult = { removedObjects: 0, removedBytes: 0 };
    const lastUsed = (info: Deno.FileInfo) => info.mtime?.getTime() ?? 0;
    files.sort((a, b) => lastUsed(a.info) - lastUsed(b.info));
    for (const { hash, path, info } of files) {
      if (total <= limitBytes) break;
      if (!evictable(hash)) continue;
      // RACE: a read between the walk and the removal finds the object gone and fetches
      // it again from the tier: slower, never wrong.
      await Deno.remove(path).catch(ignoreNotFound);
      total -= info.size;
      result.removedObjects++;
      result.removedBytes += info.size;
    }
    return result;
  }

  /**
   * Counts what the store holds.
   *
   * @returns Object and manifest file counts and their total bytes.
   */
  async stats(): Promise<CasStats> {
    const stats: CasStats = { objects: 0, manifests: 0, bytes: 0 };
    for await (const { info } of walkStore(this.#objects, "")) {
      stats.objects++;
      stats.bytes += info.size;
    }
    for await (const { info } of walkStore(this.#manifests, ".json")) {
      stats.manifests++;
      stats.bytes += info.size;
    }
    const small = this.#small?.stats();
    if (small) {
      stats.objects += small.objects;
      stats.bytes += small.bytes;
    }
    return stats;
  }

  // --- internals -------------------------------------------------------------------------

  #objectPath(hash: string): string {
    return join(this.#objects, hash.slice(0, 2), hash);
  }

  #manifestPath(hash: string): string {
    return join(this.#manifests, hash.slice(0, 2), `${hash}.json`);
  }

  /** Creates a fan-out folder once, fsyncing its parent when it is new. */
  async #ensureDir(dir: string): Promise<void> {
    if (this.#dirs.has(dir)) return;
    try {
      await Deno.mkdir(dir);
      await syncDir(dirname(dir));
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
    }
    this.#dirs.add(dir);
  }

  /**
   * Whether a content (or a chunk) is stored whole, as one object in the table or as a
   * file; unlike {@linkcode Cas.has}, a manifest does not count.
   */
  async hasObject(hash: string): Promise<boolean> {
    return this.#small?.size(hash) != null || await isFile(this.#objectPath(hash));
  }

  /**
   * Stores one object: a small one in the table (see {@linkcode CasOptions.db}), else as a
   * file unless a file of the same size is already there. Either way a stored object is
   * marked as just stored, so a concurrent {@linkcode Cas.sweep} keeps it.
   */
  async #writeObject(hash: string, bytes: Uint8Array, deferSync = false): Promise<void> {
    if (this.#small?.writable && bytes.length < SMALL_OBJECT_LIMIT) {
      if (deferSync) this.#small.hold(hash, bytes);
      else this.#small.put(hash, bytes, Date.now());
      return;
    }
    const path = this.#objectPath(hash);
    const dir = dirname(path);
    const info = existsSync(path) ? await statOrNull(path) : null; // most often new
    if (info?.isFile && info.size === bytes.length && await freshen(path)) {
      // Another put of the same content may have deferred its folder's flush.
      if (!deferSync && this.#unsynced.has(dir)) await this.syncDeferred();
      return;
    }
    await this.#ensureDir(dir);
    await writeFileAtomic(join(this.#tmp, tempName()), path, bytes, 0o444, {
      syncFolder: !deferSync,
    });
    if (deferSync) this.#unsynced.add(dir);
  }

  async #writeManifest(hash: string, manifest: ChunkManifest): Promise<void> {
    const path = this.#manifestPath(hash);
    if ((await isFile(path)) && await freshen(path)) return;
    await this.#ensureDir(dirname(path));
    const json = new TextEncoder().encode(JSON.stringify(manifest));
    await writeFileAtomic(join(this.#tmp, tempName()), path, json, 0o444);
  }

  /** Shared by putFile and putStream: hash the whole, chunk once it is large enough. */
  async #putPieces(source: AsyncIterable<Uint8Array>): Promise<StoredContent> {
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
      await writes.add(this.#writeObject(chunkHash, chunk));
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
      await this.#writeObject(hash, concat(held));
      return { hash, size: total, chunked: false };
    }
    if (last !== null) await emit(last);
    await writes.finish();
    await this.#writeManifest(hash, { total_size: total, chunk_size: CHUNK_AVERAGE_SIZE, chunks });
    return { hash, size: total, chunked: true };
  }

  /** Verified pieces of a content: the whole object, or each chunk then a whole-hash check. */
  async *#pieces(hash: string): AsyncGenerator<Uint8Array> {
    const whole = await this.#readObject(hash) ?? await this.#objectFromTier(hash);
    if (whole !== null) {
      yield whole;
      return;
    }
    const manifest = await this.manifest(hash) ?? await this.#manifestFromTier(hash);
    if (manifest === null) throw new ContentNotFoundError(hash);
    const hasher = createHash("sha256");
    for await (const piece of this.#chunkPieces(hash, manifest)) {
      hasher.update(piece);
      yield piece;
    }
    const actual = hasher.digest("hex");
    if (actual !== hash) throw new CorruptContentError(hash, actual);
  }

  /**
   * Each chunk of a manifest, read and verified (hash and size) before it is yielded. A
   * size that differs from the manifest's blames the manifest of `hash`, not the chunk.
   */
  async *#chunkPieces(hash: string, manifest: ChunkManifest): AsyncGenerator<Uint8Array> {
    for (const ref of manifest.chunks) {
      const bytes = await this.#readObject(ref.hash) ?? await this.#objectFromTier(ref.hash);
      if (bytes === null) throw new ContentNotFoundError(ref.hash, "Chunk");
      if (bytes.length !== ref.size) {
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
   * Fetches an object this store lacks from the tier, verifies it and stores it; `null`
   * when there is no tier or it lacks the object too.
   *
   * @throws {CorruptContentError} When the tier's bytes do not match the hash (reported to
   * the tier; never stored or returned).
   */
  async #objectFromTier(hash: string): Promise<Uint8Array | null> {
    if (this.#tier === null) return null;
    const bytes = await this.#tier.getObject(hash);
    if (bytes === null) return null;
    const actual = sha256Hex(bytes);
    if (actual !== hash) {
      this.#tier.reportCorrupt?.(hash, actual);
      throw new CorruptContentError(
        hash,
        actual,
        `the copy in the content tier hashes to "${actual}"`,
      );
    }
    await this.#writeObject(hash, bytes);
    return bytes;
  }

  /**
   * Fetches a chunk manifest from the tier; it is stored here only once every chunk is
   * (see {@linkcode Cas.putManifest}), so a bad one is never kept.
   */
  async #manifestFromTier(hash: string): Promise<ChunkManifest | null> {
    if (this.#tier === null) return null;
    const value = await this.#tier.getManifest(hash);
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
    for (const ref of await this.missingChunks(manifest)) {
      if ((await this.#objectFromTier(ref.hash)) === null) {
        throw new ContentNotFoundError(ref.hash, "Chunk");
      }
    }
    await this.putManifest(hash, manifest);
    return manifest;
  }

  /**
   * Reads one object file and verifies it; `null` when absent. A corrupt file is removed
   * (unless it was replaced meanwhile) and reported.
   */
  async #readObject(hash: string): Promise<Uint8Array | null> {
    const small = this.#small?.get(hash);
    if (small != null) {
      const actual = sha256Hex(small);
      if (actual === hash) return small;
      this.#small!.remove(hash);
      throw new CorruptContentError(hash, actual);
    }
    const path = this.#objectPath(hash);
    let file: Deno.FsFile;
    try {
      file = Deno.openSync(path, { read: true });
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return null;
      throw error;
    }
    let bytes: Uint8Array;
    let ino: number | null;
    let mtime: Date | null = null;
    try {
      const info = file.statSync();
      ino = info.ino;
      mtime = info.mtime;
      bytes = readRest(file, info.size);
    } finally {
      file.close();
    }
    const actual = sha256Hex(bytes);
    if (actual === hash) {
      markUsed(path, mtime);
      return bytes;
    }
    // RACE: a good copy renamed in after the check above but before the remove would be
    // lost; comparing inodes first leaves only that tiny window, and the next read would
    // report it missing so it is fetched again.
    const now = await statOrNull(path);
    if (now !== null && now.ino === ino) await Deno.remove(path).catch(ignoreNotFound);
    throw new CorruptContentError(hash, actual);
  }
}

/** How stale an object's last-use time may get before a read moves it forward. */
const USE_RESOLUTION_MS = 3_600_000;

/**
 * Moves an object file's modification time to now when it is over an hour old, so
 * {@linkcode Cas.evict} sees it as recently used; a failure only costs that hint.
 */
function markUsed(path: string, mtime: Date | null): void {
  const now = Date.now();
  if (mtime !== null && now - mtime.getTime() < USE_RESOLUTION_MS) return;
  try {
    Deno.utimeSync(path, now / 1000, now / 1000);
  } catch { /* read-only store, or gone: the hint is lost */ }
}
