/**
 * Temp files of `lib/cas`: whether one left behind may still have a live writer. Internal.
 *
 * @module
 */

/**
 * How long a temp file of another process goes unmodified before it is taken for one a
 * crash left. Every writer writes its temp file within moments, and a write-back arriving
 * in pieces adds to its temp file at least every 30 minutes or has it dropped. Whether the
 * writer's process still runs cannot be asked: the binaries' permissions give no access to
 * `/proc` (Deno asks for `--allow-all` there) nor to signals.
 */
export const STALE_TEMP_MS = 60 * 60 * 1000;

/**
 * Tells whether a temp file named by `tempName` (lib/disk) (without prefix) may belong to a
 * live writer: this process's own, or another's modified within {@linkcode STALE_TEMP_MS}
 * of `now`. Unparseable names are stale.
 *
 * @param name The temp file's name.
 * @param modifiedMs When it was last modified (epoch ms), `null` when unknown.
 * @param now The time to judge at (epoch ms).
 */
export function tempOwnerAlive(name: string, modifiedMs: number | null, now: number): boolean {
  const match = /^(\d+)-/.exec(name);
  if (!match) return false;
  if (Number(match[1]) === Deno.pid) return true;
  return modifiedMs === null || now - modifiedMs < STALE_TEMP_MS;
}
