/**
 * Disk primitives shared by the CAS, workspaces, snapshots and checkpoints: flushing a
 * folder's entries, and a stat that answers `null` for a missing path.
 *
 * Metadata calls (open, stat, rename) run synchronously on purpose: on a local disk they
 * take microseconds, while a round trip through Deno's blocking pool costs tens of them.
 * Only fsync, which waits on the device, goes through the pool.
 *
 * @module
 */
import { dirname } from "node:path";

/** A temp file name that records the writing process, so a sweep can tell it is stale. */
export function tempName(prefix = "", suffix = ".tmp"): string {
  return `${prefix}${Deno.pid}-${crypto.randomUUID()}${suffix}`;
}

/** Writes every byte, looping over short writes. */
export function writeAll(file: Deno.FsFile, bytes: Uint8Array): void {
  let done = 0;
  while (done < bytes.length) done += file.writeSync(bytes.subarray(done));
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
 * @throws Any I/O error, or whatever `source` throws; the temp file is then removed and
 * `dest` is untouched.
 *
 * Creating the file and the fsyncs wait off the main thread (creation can wait for the
 * file system's journal while others fsync); writing, renaming and chmod of a file in the
 * page cache take microseconds, far less than a round trip through Deno's blocking pool.
 */
export async function writeFileAtomic(
  tempPath: string,
  dest: string,
  source: Uint8Array | AsyncIterable<Uint8Array>,
  mode: number,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const file = await Deno.open(tempPath, { write: true, createNew: true, mode: 0o600 });
  let open = true;
  let renamed = false;
  try {
    if (source instanceof Uint8Array) {
      writeAll(file, source);
    } else {
      for await (const piece of source) writeAll(file, piece);
    }
    Deno.chmodSync(tempPath, mode);
    if (!options.visibleFirst) await file.sync();
    Deno.renameSync(tempPath, dest);
    renamed = true;
    if (options.visibleFirst) await file.sync();
    file.close();
    open = false;
  } catch (error) {
    if (open) file.close();
    if (!renamed) {
      try {
        Deno.removeSync(tempPath);
      } catch { /* already gone or never made */ }
    }
    throw error;
  }
  if (options.syncFolder ?? true) await syncDir(dirname(dest));
}

/** Flushes a folder's entries (a rename or a new name in it) to disk. */
export async function syncDir(dir: string): Promise<void> {
  const handle = Deno.openSync(dir, { read: true });
  try {
    await handle.sync();
  } finally {
    handle.close();
  }
}

/** Whether an error means "no such path" (including a parent that is not a folder). */
export function isMissing(error: unknown): boolean {
  return error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory;
}

/** `Deno.lstat`, or `null` when nothing is there (or a parent is not a folder). */
export function lstatOrNull(path: string): Promise<Deno.FileInfo | null> {
  try {
    return Promise.resolve(Deno.lstatSync(path));
  } catch (error) {
    if (isMissing(error)) return Promise.resolve(null);
    return Promise.reject(error);
  }
}
