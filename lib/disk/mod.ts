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
