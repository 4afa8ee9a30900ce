/**
 * Temp files of `lib/cas`: whether one left behind may still have a live writer. Internal.
 *
 * @module
 */

/**
 * Tells whether a temp file named by `tempName` (lib/disk) (without prefix) may belong to a
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
