/**
 * Temp files of `lib/cas`: whether one left behind may still have a live writer. Internal.
 *
 * @module
 */
import { sha256Hex } from "./content_hash.ts";

/**
 * How long a temp file of another process goes unmodified before it is taken for one a
 * crash left. Every writer writes its temp file within moments, and a write-back arriving
 * in pieces adds to its temp file at least every 30 minutes or has it dropped. Whether the
 * writer's process still runs cannot be asked: the binaries' permissions give no access to
 * `/proc` (Deno asks for `--allow-all` there) nor to signals.
 */
export const STALE_TEMP_MS = 60 * 60 * 1000;

/**
 * The start of the temp file names of a process that holds its data folder's process lock
 * (see `Cas.claimTempFiles`), before the data folder's tag: `held-<tag>-<pid>-<uuid>.tmp`.
 * A later holder of the same lock knows every such file is a dead holder's.
 */
export const HOLDER_TEMP_PREFIX = "held-";

/** Hex digits of a data folder's tag in a holder's temp names. */
const TAG_HEX_DIGITS = 8;

/** A temp name's writer pid, after the holder's prefix when there is one. */
const TEMP_OWNER = new RegExp(`^(?:${HOLDER_TEMP_PREFIX}[0-9a-f]{${TAG_HEX_DIGITS}}-)?(\\d+)-`);

/**
 * The temp name prefix of the holder of `dataDir`'s process lock: the data folder's tag
 * keeps two data folders that share a content store (`--cas-dir`) apart.
 *
 * @param dataDir The data folder's absolute path.
 */
export function holderTempPrefix(dataDir: string): string {
  return `${HOLDER_TEMP_PREFIX}${
    sha256Hex(new TextEncoder().encode(dataDir)).slice(0, TAG_HEX_DIGITS)
  }-`;
}

/**
 * Tells whether a temp file named by `tempName` (lib/disk) may belong to a live writer:
 * this process's own, or another's modified within {@linkcode STALE_TEMP_MS} of `now`.
 * Unparseable names are stale.
 *
 * @param name The temp file's name (plain, or a lock holder's).
 * @param modifiedMs When it was last modified (epoch ms), `null` when unknown.
 * @param now The time to judge at (epoch ms).
 * @example
 * ```ts
 * import { equal } from "node:assert/strict";
 * const now = Date.now();
 * equal(tempOwnerAlive(`${Deno.pid}-0a1b.tmp`, 0, now), true); // this process's own
 * equal(tempOwnerAlive("1-0a1b.tmp", now - 1000, now), true); // another's, written lately
 * equal(tempOwnerAlive("held-0011aaff-1-0a1b.tmp", now - 2 * STALE_TEMP_MS, now), false);
 * equal(tempOwnerAlive("notes.txt", now, now), false);
 * ```
 */
export function tempOwnerAlive(name: string, modifiedMs: number | null, now: number): boolean {
  const match = TEMP_OWNER.exec(name);
  if (!match) return false;
  if (Number(match[1]) === Deno.pid) return true;
  return modifiedMs === null || now - modifiedMs < STALE_TEMP_MS;
}
