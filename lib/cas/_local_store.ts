/**
 * The objects and manifests one store holds locally, in files laid out as `layout.ts`
 * says and in the small-object table: durable writes, verified reads, and the deferred
 * flushes. Everything else in `Cas` (chunking, reading content, the tier, the sweep) is
 * built on this. Internal to `lib/cas`.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import type { ChunkManifest, ChunkRef } from "./types.ts";
import type { ContentTier } from "./content_tier.ts";
import { sha256Hex } from "./content_hash.ts";
import { CorruptContentError } from "./errors.ts";
import { manifestProblem } from "./manifest_problem.ts";
import {
  freshen,
  ignoreNotFound,
  isFile,
  openForReadOrNull,
  readRest,
  statOrNull,
} from "./_files.ts";
import { holderTempPrefix, tempOwnerAlive } from "./_atomic.ts";
import { casManifestPath, casObjectPath, storeFolders } from "./layout.ts";
import { syncDir, tempName, writeFileAtomic } from "../disk/mod.ts";
import { forEachLimited } from "../concurrency/mod.ts";
import { SMALL_OBJECT_LIMIT, SmallObjects } from "./small_objects.ts";

/** How stale an object's last-use time may get before a read moves it forward. */
const USE_RESOLUTION_MS = 3_600_000;

/**
 * Bytes of object files put with `readSoon` kept in memory at most (see `LocalStore`): a
 * replica fetches content, then writes it to its workspace a batch later.
 */
const RECENT_MAX_BYTES = 16 * 1024 * 1024;

/** A store's local objects and manifests (see the module doc). */
export class LocalStore {
  /** The store's folder (absolute). */
  readonly root: string;
  /** The table of small objects, when opened with a database that has or may make it. */
  readonly small: SmallObjects | null;
  /** Where missing content is looked for, if anywhere. */
  tier: ContentTier | null = null;
  readonly #tmp: string;
  /**
   * Fan-out folders made or found, so most writes skip the mkdir; concurrent writes into a
   * new folder share one. A folder removed underneath is made again (see `#intoFolder`).
   */
  readonly #dirs = new Map<string, Promise<void>>();
  /** Fan-out folders with renames not yet flushed (objects put with `deferSync`). */
  readonly #unsynced = new Set<string>();
  /** The folder flushes under way, which a later {@linkcode syncDeferred} also waits for. */
  #flushing: Promise<unknown> = Promise.resolve();
  /**
   * Object files put with `readSoon` moments ago, by hash, oldest first: their bytes, hashed
   * as they were put and never out of memory since, are read back from here once, neither
   * read from disk nor hashed again (see {@linkcode RECENT_MAX_BYTES}); later reads read the file.
   */
  readonly #recent = new Map<string, Uint8Array>();
  #recentBytes = 0;
  /** Of this process's temp names: a process lock holder's (see `claimTempFiles`). */
  #tempPrefix = "";

  private constructor(root: string, small: SmallObjects | null) {
    this.root = root;
    this.small = small;
    this.#tmp = storeFolders(root).tmp;
  }

  /**
   * Opens the store at the absolute `root`, creating its folders if needed, and removes
   * temp files left by writers that are no longer running (a crash mid-write).
   */
  static async open(root: string, db: DatabaseSync | undefined): Promise<LocalStore> {
    const store = new LocalStore(root, db ? SmallObjects.open(db) : null);
    const { objects, manifests, tmp } = storeFolders(root);
    for (const dir of [objects, manifests, tmp]) await Deno.mkdir(dir, { recursive: true });
    const now = Date.now();
    for await (const entry of Deno.readDir(tmp)) {
      // A temp file is named for its writer's pid; another's is kept while it may still be
      // written (see `tempOwnerAlive`).
      const path = join(tmp, entry.name);
      const modified = await Deno.lstat(path).then(
        (info) => info.mtime?.getTime() ?? null,
        () => null,
      );
      if (tempOwnerAlive(entry.name, modified, now)) continue;
      await Deno.remove(path, { recursive: true }).catch(ignoreNotFound);
    }
    return store;
  }

  /** A fresh temp file path in the store's `tmp/` folder. */
  tempPath(): string {
    // One for every file a replica writes: `#tmp` is normalized already (no join).
    return `${this.#tmp}/${tempName(this.#tempPrefix)}`;
  }

  /**
   * Removes the temp files an earlier holder of `dataDir`'s process lock left (a `kill -9`
   * mid-write), and names this process's own as the holder's from now on: called by the
   * process that just took the lock, so every earlier holder has ended.
   *
   * @param dataDir The data folder whose process lock this process holds (absolute).
   * @returns How many temp files were removed.
   */
  async claimTempFiles(dataDir: string): Promise<number> {
    const prefix = holderTempPrefix(dataDir);
    let removed = 0;
    for await (const entry of Deno.readDir(this.#tmp)) {
      if (!entry.name.startsWith(prefix)) continue;
      await Deno.remove(join(this.#tmp, entry.name), { recursive: true }).catch(ignoreNotFound);
      removed++;
    }
    this.#tempPrefix = prefix;
    return removed;
  }

  /** The absolute path of an object file. */
  objectPath(hash: string): string {
    return join(this.root, casObjectPath(hash));
  }

  /** The absolute path of a manifest file. */
  manifestPath(hash: string): string {
    return join(this.root, casManifestPath(hash));
  }

  /** Whether an object is stored whole (in the table or as a file); a manifest does not count. */
  async hasObject(hash: string): Promise<boolean> {
    // One kept in memory is stored (see #recent): no query and no look at the disk.
    return this.#recent.has(hash) || this.small?.size(hash) != null ||
      await isFile(this.objectPath(hash));
  }

  /**
   * Stores one object: a small one in the table, else as a file unless a file of the same
   * size is already there. Either way a stored object is marked as just stored, so a
   * concurrent sweep keeps it. `deferSync` and `readSoon`: see `Cas.putVerified`.
   */
  async writeObject(
    hash: string,
    bytes: Uint8Array,
    options: { deferSync?: boolean; readSoon?: boolean } = {},
  ): Promise<void> {
    const deferSync = options.deferSync ?? false;
    if (this.small?.writable && bytes.length < SMALL_OBJECT_LIMIT) {
      if (deferSync) this.small.hold(hash, bytes);
      else this.small.put(hash, bytes, Date.now());
      return;
    }
    const path = this.objectPath(hash);
    const dir = dirname(path);
    const info = existsSync(path) ? await statOrNull(path) : null; // most often new
    if (info?.isFile && info.size === bytes.length && await freshen(path)) {
      // Another put of the same content may have deferred its folder's flush.
      if (!deferSync && this.#unsynced.has(dir)) await this.syncDeferred();
      return;
    }
    await this.#intoFolder(
      dir,
      () => writeFileAtomic(this.tempPath(), path, bytes, 0o444, { syncFolder: !deferSync }),
    );
    if (deferSync) this.#unsynced.add(dir);
    if (options.readSoon) this.#keepRecent(hash, bytes);
  }

  /** Keeps an object's bytes for {@linkcode LocalStore.readObject}, within the bound. */
  #keepRecent(hash: string, bytes: Uint8Array): void {
    if (bytes.length > RECENT_MAX_BYTES) return;
    this.#forgetRecent(hash);
    this.#recent.set(hash, bytes);
    this.#recentBytes += bytes.length;
    for (const [oldest, kept] of this.#recent) {
      if (this.#recentBytes <= RECENT_MAX_BYTES) break;
      this.#recent.delete(oldest);
      this.#recentBytes -= kept.length;
    }
  }

  #forgetRecent(hash: string): void {
    const kept = this.#recent.get(hash);
    if (kept === undefined) return;
    this.#recent.delete(hash);
    this.#recentBytes -= kept.length;
  }

  /**
   * Forgets every object kept in memory since it was put: called before anything removes
   * object files (a sweep, an eviction), so that a read never finds in memory what the
   * store no longer holds.
   */
  forgetRecentObjects(): void {
    this.#recent.clear();
    this.#recentBytes = 0;
  }

  /** Stores a manifest file unless one is there already (then only marked as just stored). */
  async writeManifest(hash: string, manifest: ChunkManifest): Promise<void> {
    const path = this.manifestPath(hash);
    if ((await isFile(path)) && await freshen(path)) return;
    const json = new TextEncoder().encode(JSON.stringify(manifest));
    await this.#intoFolder(
      dirname(path),
      () => writeFileAtomic(this.tempPath(), path, json, 0o444),
    );
  }

  /**
   * Makes the objects put with `deferSync` durable: commits their rows in one transaction
   * (unless `keepRowsHeld`: the caller writes them in its own, see
   * `SmallObjects.writeHeld`) and flushes their folders (waiting for flushes already under
   * way).
   */
  async syncDeferred(options: { keepRowsHeld?: boolean } = {}): Promise<void> {
    if (!options.keepRowsHeld) this.small?.commitHeld();
    const dirs = [...this.#unsynced];
    this.#unsynced.clear();
    const flush = Promise.all([this.#flushing, forEachLimited(dirs, 16, syncDir)]);
    this.#flushing = flush.catch(() => {/* reported to the caller below */});
    await flush;
  }

  /**
   * Reads one object and verifies it; `null` when absent. A corrupt one is removed
   * (a file unless it was replaced meanwhile) and reported. With `verify: false` the
   * bytes are not hashed: only for a caller that hashes a whole made of them, and reads
   * them again verified when that whole does not match (see `contentPieces`).
   *
   * @throws {CorruptContentError} When its bytes do not hash to `hash`.
   */
  async readObject(hash: string, options: { verify?: boolean } = {}): Promise<Uint8Array | null> {
    const verify = options.verify ?? true;
    const small = this.small?.get(hash);
    if (small != null) return verify ? this.#verifiedRow(hash, small) : small;
    // A file written moments ago: what the replica applies right after fetching it. Read
    // once, then left to the file: kept on, the last 16 MiB a sync fetched would stay in
    // memory for good (views, often, of larger frames they arrived in).
    const recent = this.#recent.get(hash);
    if (recent !== undefined) {
      this.#forgetRecent(hash);
      return recent;
    }
    return await this.#readObjectFile(hash, verify);
  }

  /**
   * A row's bytes once they hash to `hash`; held rows were hashed as they were put, moments
   * ago, and never left memory, so they are not hashed again.
   *
   * @throws {CorruptContentError} When a committed row's bytes hash to something else
   * (the row is removed).
   */
  #verifiedRow(hash: string, bytes: Uint8Array): Uint8Array {
    if (this.small!.held(hash) === bytes) return bytes;
    const actual = sha256Hex(bytes);
    if (actual === hash) return bytes;
    this.small!.remove(hash);
    throw new CorruptContentError(hash, actual);
  }

  /** An object file's bytes, verified as {@linkcode LocalStore.readObject} says. */
  async #readObjectFile(hash: string, verify = true): Promise<Uint8Array | null> {
    const path = this.objectPath(hash);
    const file = openForReadOrNull(path);
    if (file === null) return null;
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
    if (!verify) {
      markUsed(path, mtime);
      return bytes;
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

  /**
   * Reads one object stored whole, verified, unless it has more than `maxBytes`: its size
   * is known before its bytes are read (a row's length, a file's status), so one lookup
   * does what a size query then a read do. `null` when not stored whole here.
   *
   * @throws {CorruptContentError} When its bytes do not hash to `hash` (it is removed).
   */
  async readObjectWithin(
    hash: string,
    maxBytes: number,
  ): Promise<Uint8Array | { tooLarge: number } | null> {
    const row = this.small?.get(hash);
    if (row != null) {
      // A row is under SMALL_OBJECT_LIMIT bytes: read whole before its size is known.
      return row.length > maxBytes ? { tooLarge: row.length } : this.#verifiedRow(hash, row);
    }
    const info = await statOrNull(this.objectPath(hash));
    if (!info?.isFile) return null;
    if (info.size > maxBytes) return { tooLarge: info.size };
    // RACE: replaced by a larger file since the status: read anyway, and checked.
    return await this.#readObjectFile(hash);
  }

  /**
   * The objects among `hashes` stored as rows of at most `maxBytes`, verified, read in one
   * transaction (see `SmallObjects.getMany`). Those left out (not rows, larger, or not
   * hashing to their hash) are for {@linkcode LocalStore.readObjectWithin}, which also
   * removes and reports a corrupt one.
   */
  readRowsWithin(hashes: Iterable<string>, maxBytes: number): Map<string, Uint8Array> {
    const rows = this.small?.getMany(hashes, maxBytes) ?? new Map<string, Uint8Array>();
    for (const [hash, bytes] of rows) {
      if (this.small!.held(hash) !== bytes && sha256Hex(bytes) !== hash) rows.delete(hash);
    }
    return rows;
  }

  /**
   * Reads a stored manifest; `null` when there is none.
   *
   * @throws {CorruptContentError} When the stored manifest is unreadable (it is removed).
   */
  async readManifest(hash: string): Promise<ChunkManifest | null> {
    const path = this.manifestPath(hash);
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
   * The chunks of a manifest not stored yet, each hash once, in order.
   *
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

  /** A content's size without reading it (the total for chunked content); `null` when absent. */
  async contentSize(hash: string): Promise<number | null> {
    const small = this.small?.size(hash);
    if (small != null) return small;
    const info = await statOrNull(this.objectPath(hash));
    if (info?.isFile) return info.size;
    try {
      return (await this.readManifest(hash))?.total_size ?? null;
    } catch (error) {
      if (error instanceof CorruptContentError) return null;
      throw error;
    }
  }

  /**
   * Runs a write into a fan-out folder, made first unless known to exist. When the write
   * finds the folder gone (removed underneath, by hand), it is made again and the write
   * tried once more.
   */
  async #intoFolder<T>(dir: string, write: () => Promise<T>): Promise<T> {
    await this.#ensureDir(dir);
    try {
      return await write();
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound) || existsSync(dir)) throw error;
      this.#dirs.delete(dir);
      await this.#ensureDir(dir);
      return await write();
    }
  }

  /** Creates a fan-out folder once, fsyncing its parent when it is new. */
  #ensureDir(dir: string): Promise<void> {
    let made = this.#dirs.get(dir);
    if (made === undefined) {
      const making = makeFolder(dir);
      this.#dirs.set(dir, making);
      // A failure is reported to the writers waiting now; a later write tries again.
      making.catch(() => {
        if (this.#dirs.get(dir) === making) this.#dirs.delete(dir);
      });
      made = making;
    }
    return made;
  }
}

/** Makes a folder, fsyncing its parent when it is new; one already there is fine. */
async function makeFolder(dir: string): Promise<void> {
  try {
    await Deno.mkdir(dir);
    await syncDir(dirname(dir));
  } catch (error) {
    if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
  }
}

/**
 * Moves an object file's modification time to now when it is over an hour old, so
 * eviction sees it as recently used; a failure only costs that hint.
 */
export function markUsed(path: string, mtime: Date | null): void {
  const now = Date.now();
  if (mtime !== null && now - mtime.getTime() < USE_RESOLUTION_MS) return;
  try {
    Deno.utimeSync(path, now / 1000, now / 1000);
  } catch { /* read-only store, or gone: the hint is lost */ }
}
