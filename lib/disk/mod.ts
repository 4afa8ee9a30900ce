/**
 * Disk primitives shared by the CAS, workspaces, snapshots and checkpoints: atomic file
 * and symlink writes through temp names, flushing a folder's entries, and a stat that
 * answers `null` for a missing path.
 *
 * Metadata calls (open, stat, rename) run synchronously on purpose: on a local disk they
 * take microseconds, while a round trip through Deno's blocking pool costs tens of them.
 * Only fsync, which waits on the device, goes through the pool.
 *
 * @module
 */
import { basename, dirname, join } from "node:path";

/**
 * Name ending of the temp files made beside a destination by {@linkcode tempBeside}
 * (`.<name>.<pid>-<uuid>.chronicle-tmp`): watchers should ignore such files.
 */
export const WORKSPACE_TEMP_SUFFIX = ".chronicle-tmp";

/** How much of the destination's name, in UTF-8 bytes, a temp name beside it repeats. */
const TEMP_NAME_MAX_BYTES = 100;

/** A temp file name that records the writing process, so a sweep can tell it is stale. */
export function tempName(prefix = "", suffix = ".tmp"): string {
  return `${prefix}${Deno.pid}-${crypto.randomUUID()}${suffix}`;
}

/**
 * A temp path beside `dest` that watchers ignore: `.<name>.<pid>-<uuid>.chronicle-tmp`,
 * the name cut to 100 UTF-8 bytes so the temp name stays within the 255-byte limit.
 */
export function tempBeside(dest: string): string {
  const prefix = `.${utf8Prefix(basename(dest), TEMP_NAME_MAX_BYTES)}.`;
  return join(dirname(dest), tempName(prefix, WORKSPACE_TEMP_SUFFIX));
}

const UTF8 = new TextEncoder();

/** The longest start of `name` that is at most `maxBytes` in UTF-8, cut between characters. */
function utf8Prefix(name: string, maxBytes: number): string {
  let bytes = 0;
  let out = "";
  for (const char of name) {
    bytes += UTF8.encode(char).length;
    if (bytes > maxBytes) break;
    out += char;
  }
  return out;
}

/** Writes every byte, looping over short writes. */
export function writeAll(file: Deno.FsFile, bytes: Uint8Array): void {
  let done = 0;
  while (done < bytes.length) done += file.writeSync(bytes.subarray(done));
}

/**
 * Pieces at least this large are written off the main thread (see {@linkcode writePiece}).
 */
const WRITE_OFF_THREAD_MIN = 64 * 1024;

/**
 * Writes a piece of a file: a small one right here, a large one through Deno's blocking
 * pool. A write can wait on the file system's journal while other files are flushed (a
 * replica flushes every object it stores), and a large one copies a lot into the page
 * cache: neither then holds up the main thread. A small one costs less than the pool's
 * round trip.
 */
async function writePiece(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  if (bytes.length < WRITE_OFF_THREAD_MIN) return writeAll(file, bytes);
  let done = 0;
  while (done < bytes.length) done += await file.write(bytes.subarray(done));
}

/**
 * Writes bytes to a new file (never over an existing one) and fsyncs it; its folder is the
 * caller's to flush (see {@linkcode syncDir}), so a caller writing many files flushes once.
 *
 * @param path The file to create.
 * @param bytes Its content.
 * @throws {Deno.errors.AlreadyExists} When something is already there.
 */
export async function writeNewSynced(path: string, bytes: Uint8Array): Promise<void> {
  using file = await Deno.open(path, { write: true, createNew: true });
  writeAll(file, bytes);
  await file.sync();
}

/** Options for {@linkcode writeFileAtomic}. */
export interface AtomicWriteOptions {
  /**
   * Whether to fsync `dest`'s folder after the rename; a caller writing many files into a
   * few folders may leave it out and flush each folder once. @default {true}
   */
  syncFolder?: boolean;
  /**
   * Rename first, fsync after: the file is visible sooner, and durable once the call
   * returns, but a power cut in between can leave it torn. Only for copies that can be
   * fetched again and are checked before use (a replica's files). @default {false}
   */
  visibleFirst?: boolean;
  /**
   * Whether to fsync the file. Leave it out only when the caller flushes the whole file
   * system once for many files (see {@linkcode syncFileSystem}). @default {true}
   */
  syncFile?: boolean;
  /**
   * Only create `dest`, never replace anything there: the temp file is linked into place
   * (the link fails when `dest` exists, whatever it is) and its temp name removed. What
   * was there is then untouched, with no window between a check and the write.
   *
   * Not created in place (`O_EXCL` on `dest`), though that saves the link and the unlink:
   * another process could then write into the file between its creation and its status
   * being read, and that write would be recorded as this content; and a crash would leave
   * a partial file where a local write is looked for. Measured on a replica's initial sync
   * of 10,000 files, in place saved 3 to 7% of its user CPU time, within the disk's noise
   * for the sync's time.
   * @default {false}
   */
  createOnly?: boolean;
  /**
   * Called right before `dest` is replaced (after the temp file is written and flushed,
   * the slow part), so a caller can refuse the write if `dest` changed since it looked:
   * it throws (see {@linkcode expectStamp}) and the temp file is removed. Not called with
   * `createOnly`, which replaces nothing. @default {undefined}
   */
  beforeReplace?: () => void;
}

/**
 * Writes `source` to `dest` atomically through `tempPath` (which must be on the same
 * filesystem): readers see the old file or the whole new one, never a part.
 *
 * @param tempPath A new file's path; must not exist.
 * @param dest The final path, replaced if it exists.
 * @param source The bytes, or pieces of them in order.
 * @param mode Permission bits set on the file before it is renamed into place.
 * @param options Folder flush and order; see {@linkcode AtomicWriteOptions}.
 * @returns The written file's status (taken from its handle, so it is ours even if
 * `dest` has been replaced since): what a caller records without looking again.
 * @throws Any I/O error, or whatever `source` throws; the temp file is then removed and
 * `dest` is untouched. `Deno.errors.AlreadyExists` when `createOnly` and `dest` exists.
 *
 * The fsyncs and the writes of large pieces (see {@linkcode writePiece}) wait off the main
 * thread. Creating, renaming and chmod of a file, and a small write, take microseconds,
 * less than a round trip through Deno's blocking pool; measured, creating in the pool made
 * replication slower, never faster, even while file creation itself was slow (again with
 * large writes in the pool: a realistic initial sync 5.8 s against 5.0 s).
 */
export async function writeFileAtomic(
  tempPath: string,
  dest: string,
  source: Uint8Array | AsyncIterable<Uint8Array>,
  mode: number,
  options: AtomicWriteOptions = {},
): Promise<Deno.FileInfo> {
  const prepared = await prepareFileAtomic(tempPath, dest, source, mode, options);
  return await prepared.place();
}

/**
 * A file written under its temp name and not yet in place (see
 * {@linkcode prepareFileAtomic}). A temp file never placed (a process stopped first) is
 * swept like any other a crash leaves.
 */
export interface PreparedFile {
  /** Its status, from its own handle (see {@linkcode writeFileAtomic}). */
  readonly written: Deno.FileInfo;
  /**
   * Puts it at its destination as {@linkcode writeFileAtomic} does, then flushes what the
   * options ask for.
   *
   * @returns The status of the file placed: `written`, unless it had to be written again
   * (see `Cas.prepareWrite`).
   * @throws As {@linkcode writeFileAtomic}; the temp file is then removed.
   */
  place(): Promise<Deno.FileInfo>;
}

/**
 * The first half of {@linkcode writeFileAtomic}: the temp file written (and flushed,
 * unless `visibleFirst` or not `syncFile`), closed, but not yet at `dest`. A caller writing
 * many files places them later, together: a file placed once the clock has moved past its
 * modification time can be trusted by that time alone (see `settledWhenPlaced` in
 * lib/workspace), since any later write changes it.
 *
 * Its system calls (and {@linkcode PreparedFile.place}'s) run synchronously on the calling
 * thread. Measured against the two ways of moving them off it, in a replica's initial sync of
 * 10,000 files of 200 B to 6 KiB (four interleaved rounds each, one run): Deno's asynchronous
 * calls (each a trip through its blocking pool) took 30% more user and twice the system CPU
 * time; a worker making the calls, told of each file by a message and answering with its
 * status, 60% more user CPU time. Both syncs took longer.
 *
 * @returns The prepared file, to place.
 * @throws Any I/O error, or whatever `source` throws; the temp file is then removed.
 */
export async function prepareFileAtomic(
  tempPath: string,
  dest: string,
  source: Uint8Array | AsyncIterable<Uint8Array>,
  mode: number,
  options: AtomicWriteOptions = {},
): Promise<PreparedFile> {
  // Created with the permission bits it will have, but writable by its owner only (the
  // umask may take more away): most often it then needs no chmod. Nobody can read more of
  // it than of the final file, nor change it before it is in place.
  const file = Deno.openSync(tempPath, {
    write: true,
    createNew: true,
    mode: (mode & 0o755) | 0o200,
  });
  let written: Deno.FileInfo;
  try {
    if (source instanceof Uint8Array) {
      await writePiece(file, source);
    } else {
      for await (const piece of source) await writePiece(file, piece);
    }
    written = file.statSync();
    if (((written.mode ?? 0) & 0o7777) !== mode) {
      Deno.chmodSync(tempPath, mode);
      written = { ...written, mode: ((written.mode ?? 0) & ~0o7777) | mode };
    }
    // Not at all when the caller flushes the whole file system; after the rename when
    // visible first.
    if (options.syncFile !== false && !options.visibleFirst) await file.sync();
  } catch (error) {
    file.close();
    removeTemp(tempPath);
    throw error;
  }
  // Closed before the rename: a watcher of dest's folder then sees no close-after-write.
  file.close();
  return {
    written,
    place: async () => {
      await placeFile(tempPath, dest, options);
      return written;
    },
  };
}

/** Removes a temp file a failed write leaves, if it is there. */
function removeTemp(tempPath: string): void {
  try {
    Deno.removeSync(tempPath);
  } catch { /* already gone or never made */ }
}

/** The second half of {@linkcode writeFileAtomic}: see {@linkcode PreparedFile.place}. */
async function placeFile(
  tempPath: string,
  dest: string,
  options: AtomicWriteOptions,
): Promise<void> {
  // Visible first: the content is flushed after the rename, through a read-only handle on
  // the same file (closing it is no write a watcher reports, and it is ours whatever
  // replaces `dest` meanwhile).
  let reader: Deno.FsFile | null = null;
  try {
    if (options.syncFile !== false && options.visibleFirst) {
      reader = Deno.openSync(tempPath, { read: true });
    }
    if (options.createOnly) linkIntoPlace(tempPath, dest);
    else {
      options.beforeReplace?.();
      Deno.renameSync(tempPath, dest);
    }
  } catch (error) {
    reader?.close();
    removeTemp(tempPath);
    throw error;
  }
  if (reader) {
    try {
      await reader.sync();
    } finally {
      reader.close();
    }
  }
  if (options.syncFolder ?? true) await syncDir(dirname(dest));
}

/**
 * Gives the file at `tempPath` the name `dest` only if nothing is there, and drops the
 * temp name. Where the file system has no hard links, `dest` is checked and the file
 * renamed: a race with a writer there is then possible, as with any check-then-write.
 *
 * @throws {Deno.errors.AlreadyExists} When `dest` exists.
 */
function linkIntoPlace(tempPath: string, dest: string): void {
  try {
    Deno.linkSync(tempPath, dest);
  } catch (error) {
    if (!HARD_LINKS_REFUSED.has(errorCode(error))) throw error;
    if (lstatOrNullSync(dest)) throw new Deno.errors.AlreadyExists(`File exists: "${dest}"`);
    Deno.renameSync(tempPath, dest);
    return;
  }
  try {
    Deno.removeSync(tempPath);
  } catch {
    // The file is in place. A temp name left behind is ignored like one a crash leaves.
  }
}

/** What `link` answers on a file system that has no hard links (FAT, some FUSE mounts). */
const HARD_LINKS_REFUSED = new Set<unknown>(["EPERM", "EOPNOTSUPP", "ENOTSUP", "ENOSYS"]);

function errorCode(error: unknown): unknown {
  return (error as { code?: unknown } | null)?.code;
}

/** Options for {@linkcode writeSymlinkAtomic}. */
export interface SymlinkWriteOptions {
  /**
   * Whether to fsync `dest`'s folder after the rename; leave it out only when the caller
   * flushes the folder itself. @default {true}
   */
  syncFolder?: boolean;
}

/**
 * Creates or replaces `dest` with a symbolic link to `target`, atomically: a link made
 * under a temp name beside `dest` (see {@linkcode tempBeside}) is renamed over it.
 *
 * @throws Any I/O error; the temp link is then removed and `dest` is untouched.
 */
export async function writeSymlinkAtomic(
  dest: string,
  target: string,
  options: SymlinkWriteOptions = {},
): Promise<void> {
  const temp = tempBeside(dest);
  await Deno.symlink(target, temp);
  try {
    Deno.renameSync(temp, dest);
  } catch (error) {
    try {
      Deno.removeSync(temp);
    } catch { /* already gone */ }
    throw error;
  }
  if (options.syncFolder ?? true) await syncDir(dirname(dest));
}

/** Flushes a folder's entries (a rename or a new name in it) to disk, or a file's content. */
export async function syncDir(dir: string): Promise<void> {
  const handle = Deno.openSync(dir, { read: true });
  try {
    await handle.sync();
  } finally {
    handle.close();
  }
}

/** Whether `sync -f` works here: unknown until first tried. */
let fileSystemSync: "unknown" | "works" | "unavailable" = "unknown";

/**
 * Whether {@linkcode syncFileSystem} may work here: not known to fail, and permitted to
 * run `sync` (asked, never requested: a request would prompt whoever sits at the
 * terminal). Runs nothing.
 */
export function canSyncFileSystem(): boolean {
  if (fileSystemSync === "unavailable") return false;
  if (Deno.permissions.querySync({ name: "run", command: "sync" }).state === "granted") {
    return true;
  }
  fileSystemSync = "unavailable";
  return false;
}

/**
 * Flushes everything written to the file system that holds `path`: syncfs(2), through
 * `sync -f` (coreutils, busybox), for want of a Deno call. One flush for a batch of many
 * files costs far less than an fsync of each: every fsync waits for its own writes, and
 * blocks the creation of other files meanwhile. It also waits for whatever else is
 * unwritten on that file system, other processes' data included.
 *
 * @returns `false` when it cannot be done now: no `sync` program, no permission to run
 * it, or one without `-f` (then known for good, see {@linkcode canSyncFileSystem}), or no
 * process could be started. The caller flushes file by file instead.
 * @throws {Error} When the flush itself failed (an I/O error; Linux reports those from
 * syncfs since 5.8): what was written may be lost.
 */
export async function syncFileSystem(path: string): Promise<boolean> {
  if (!canSyncFileSystem()) return false;
  let result: Deno.CommandOutput;
  try {
    result = await new Deno.Command("sync", {
      args: ["-f", path],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
  } catch (error) {
    if (
      error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotCapable ||
      error instanceof Deno.errors.PermissionDenied
    ) {
      fileSystemSync = "unavailable";
    }
    return false; // or no process now (a process limit): flushed file by file this time
  }
  if (result.success) {
    fileSystemSync = "works";
    return true;
  }
  const message = new TextDecoder().decode(result.stderr).trim();
  if (fileSystemSync === "unknown") {
    // Never worked: most likely a `sync` without `-f`. Flushing file by file reports a
    // real I/O error anyway.
    fileSystemSync = "unavailable";
    return false;
  }
  throw new Error(`Cannot flush the file system of "${path}": ${message || "sync -f failed"}`);
}

/** Whether an error is a rename refused because source and destination are on two mounts. */
export function isCrossDevice(error: unknown): boolean {
  return errorCode(error) === "EXDEV";
}

/** Whether an error means "no such path" (including a parent that is not a folder). */
export function isMissing(error: unknown): boolean {
  return error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory;
}

/** `Deno.lstat`, or `null` when nothing is there (or a parent is not a folder). */
export function lstatOrNull(path: string): Promise<Deno.FileInfo | null> {
  try {
    return Promise.resolve(lstatOrNullSync(path));
  } catch (error) {
    return Promise.reject(error);
  }
}

/** `Deno.lstatSync`, or `null` when nothing is there (or a parent is not a folder). */
export function lstatOrNullSync(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
}

/**
 * What a path's status says of what is there, to tell later whether it changed: its
 * inode, size, modification time (milliseconds, what Deno gives), mode and type. A write
 * in place changes the time or the size; a file renamed over it changes the inode.
 */
export interface DiskStamp {
  /** Inode number (`null` where the platform has none). */
  ino: number | null;
  /** Size in bytes. */
  size: number;
  /** Modification time in milliseconds (`null` where unknown). */
  mtimeMs: number | null;
  /** Full `st_mode` (`null` where unknown). */
  mode: number | null;
}

/**
 * The stamp of a status (see {@linkcode DiskStamp}).
 *
 * @param info A status from `lstat`.
 * @returns Its stamp.
 */
export function stampOf(info: Deno.FileInfo): DiskStamp {
  return {
    ino: info.ino,
    size: info.size,
    mtimeMs: info.mtime?.getTime() ?? null,
    mode: info.mode,
  };
}

/** A path changed on disk since its caller looked at it: the change that needed it unchanged was not made. */
export class ChangedOnDiskError extends Error {
  /**
   * Makes the error.
   *
   * @param path The path (absolute).
   * @param found What is there now, if looked at: a special file (a named pipe, a socket, a
   * device) is named, since it never settles by being recorded.
   */
  constructor(path: string, found?: Deno.FileInfo | null) {
    const special = found ? specialFileKind(found) : null;
    super(
      special
        ? `"${path}" holds ${special}, which is never recorded, so it was left as it is`
        : `"${path}" changed on disk since it was checked, so it was left as it is`,
    );
    this.name = "ChangedOnDiskError";
  }
}

/**
 * What kind of special file an `lstat` found, for people: "a named pipe", "a socket" or "a
 * device"; `null` for a file, folder or link.
 *
 * @param info The `lstat` result.
 * @returns The kind, or `null`.
 */
export function specialFileKind(info: Deno.FileInfo): string | null {
  if (info.isFile || info.isDirectory || info.isSymlink) return null;
  return info.isFifo ? "a named pipe" : info.isSocket ? "a socket" : "a device";
}

/**
 * Checks that `path` still has `stamp` (nothing there when `stamp` is `null`), looking
 * once, without following a link: the last look before a change that must not replace
 * what someone else just wrote.
 *
 * @param path The absolute path.
 * @param stamp What the caller saw there.
 * @throws {ChangedOnDiskError} When what is there differs.
 */
export function expectStamp(path: string, stamp: DiskStamp | null): void {
  const info = lstatOrNullSync(path);
  const now = info === null ? null : stampOf(info);
  const same = now === null || stamp === null
    ? now === stamp
    : now.ino === stamp.ino && now.size === stamp.size && now.mtimeMs === stamp.mtimeMs &&
      now.mode === stamp.mode;
  if (!same) throw new ChangedOnDiskError(path, info);
}
