/**
 * Durable file writes for `lib/cas`: temp file in a chosen folder, fsync, chmod, rename,
 * fsync the destination folder; the temp file is removed on any error. Internal.
 *
 * @module
 */
import { dirname } from "node:path";

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
export async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let done = 0;
  while (done < bytes.length) done += await file.write(bytes.subarray(done));
}

/** Flushes a folder's entries (a rename or a new name in it) to disk. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await Deno.open(dir, { read: true });
  try {
    await handle.sync();
  } finally {
    handle.close();
  }
}

/**
 * Writes `source` to `dest` atomically through `tempPath` (which must be on the same
 * filesystem): readers see the old file or the whole new one, never a part.
 *
 * @param tempPath A new file's path; must not exist.
 * @param dest The final path, replaced if it exists.
 * @param source The bytes, or pieces of them in order.
 * @param mode Permission bits set on the file before it is renamed into place.
 * @throws Any I/O error, or whatever `source` throws; the temp file is then removed and
 * `dest` is untouched.
 */
export async function writeFileAtomic(
  tempPath: string,
  dest: string,
  source: Uint8Array | AsyncIterable<Uint8Array>,
  mode: number,
): Promise<void> {
  const file = await Deno.open(tempPath, { write: true, createNew: true, mode: 0o600 });
  let open = true;
  try {
    if (source instanceof Uint8Array) {
      await writeAll(file, source);
    } else {
      for await (const piece of source) await writeAll(file, piece);
    }
    await file.sync();
    file.close();
    open = false;
    await Deno.chmod(tempPath, mode);
    await Deno.rename(tempPath, dest);
  } catch (error) {
    if (open) file.close();
    await Deno.remove(tempPath).catch(() => {/* already gone or never made */});
    throw error;
  }
  await syncDir(dirname(dest));
}
