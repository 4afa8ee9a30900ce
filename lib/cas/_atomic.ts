/**
 * Durable file writes for `lib/cas`: temp file in a chosen folder, fsync, chmod, rename,
 * fsync the destination folder; the temp file is removed on any error. Internal.
 *
 * @module
 */
import { dirname } from "node:path";
import { syncDir } from "../disk/mod.ts";

/** A temp file name that records the writing process, so a sweep can tell it is stale. */
export function tempName(prefix = "", suffix = ".tmp"): string {
  return `${prefix}${Deno.pid}-${crypto.randomUUID()}${suffix}`;
}

/**
 * Tells whether a temp file named by {@linkcode tempName} (without prefix) may belong to a
 * live writer: its process is this one or is still running. Unparseable names are stale.
 */
export async function tempOwnerAlive(name: string): Promise<boolean> {
  const match = /^(\d+)-/.exec(name);
  if (!match) return false;
  const pid = Number(match[1]);
  if (pid === Deno.pid) return true;
  try {
    await Deno.stat(`/proc/${pid}`);
    return true;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  // Without /proc (not Linux) no liveness check is possible: call it alive and keep the file.
  try {
    await Deno.stat("/proc/self");
    return false;
  } catch {
    return true;
  }
}

/** Writes every byte, looping over short writes. */
export function writeAll(file: Deno.FsFile, bytes: Uint8Array): void {
  let done = 0;
  while (done < bytes.length) done += file.writeSync(bytes.subarray(done));
}

/**
 * Writes `source` to `dest` atomically through `tempPath` (which must be on the same
 * filesystem): readers see the old file or the whole new one, never a part.
 *
 * @param tempPath A new file's path; must not exist.
 * @param dest The final path, replaced if it exists.
 * @param source The bytes, or pieces of them in order.
 * @param mode Permission bits set on the file before it is renamed into place.
 * @param syncFolder Whether to fsync `dest`'s folder after the rename; a caller writing
 * many files into a few folders may leave it out and flush each folder once.
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
  syncFolder = true,
): Promise<void> {
  const file = await Deno.open(tempPath, { write: true, createNew: true, mode: 0o600 });
  let open = true;
  try {
    if (source instanceof Uint8Array) {
      writeAll(file, source);
    } else {
      for await (const piece of source) writeAll(file, piece);
    }
    await file.sync();
    file.close();
    open = false;
    Deno.chmodSync(tempPath, mode);
    Deno.renameSync(tempPath, dest);
  } catch (error) {
    if (open) file.close();
    try {
      Deno.removeSync(tempPath);
    } catch { /* already gone or never made */ }
    throw error;
  }
  if (syncFolder) await syncDir(dirname(dest));
}
