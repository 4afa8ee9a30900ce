/**
 * When a sandbox's removals may go to the master. `rm -rf` of a sandbox's folder removes
 * its files one by one before it reaches the data folder, and each removal looks like one
 * the agent made: sent at once, a burst of them would reach the master before the replica
 * found its folder gone and stopped (a CI run saw 26 of 200 files removed on the master
 * that way). Removals therefore wait until none was journaled for a moment (ten seconds at
 * most), and none goes once the folder is gone. A removal the agent makes reaches the
 * master that much later, and so does whatever was journaled after it.
 *
 * An `rm -rf` of a large tree on a slow disk runs longer than ten seconds. So once
 * {@linkcode MASS_REMOVALS} removals wait, they wait for a longer quiet, a minute at most:
 * an agent rarely removes thousands of files nonstop for that long, and one removing a large
 * folder (`rm -rf node_modules`) waits a few seconds more.
 *
 * @module
 */

/** How long no removal may have been journaled before removals are sent, ms. */
export const REMOVAL_QUIET_MS = 1000;

/**
 * The longest a removal waits for that quiet, ms: removals that never stop (a build that
 * keeps cleaning up) still go, and with them everything journaled after them.
 */
export const REMOVAL_HOLD_MAX_MS = 10_000;

/** Removals waiting at once from which they count as a mass removal (see the module doc). */
export const MASS_REMOVALS = 2_000;

/** How long no removal may have been journaled before a mass removal is sent, ms. */
export const MASS_REMOVAL_QUIET_MS = 3_000;

/** The longest a mass removal waits for that quiet, ms. */
export const MASS_REMOVAL_HOLD_MAX_MS = 60_000;

/** The removals not yet sent: how many, and when they were journaled (epoch ms). */
export interface PendingRemovals {
  /** The oldest. */
  oldestMs: number;
  /** The newest. */
  newestMs: number;
  /** How many. */
  count: number;
}

/**
 * How long the journal's removals must still wait before they are sent (pure): until the
 * newest was journaled `quietMs` ago, or the oldest {@linkcode REMOVAL_HOLD_MAX_MS} ago,
 * whichever comes first; for {@linkcode MASS_REMOVALS} or more, until the newest was
 * journaled {@linkcode MASS_REMOVAL_QUIET_MS} ago (if longer than `quietMs`) or the oldest
 * {@linkcode MASS_REMOVAL_HOLD_MAX_MS} ago; `null` never, once the workspace is gone (its
 * replica is stopping).
 *
 * @param pending When the removals not yet sent were journaled; `null` when none waits.
 * @param nowMs Now (epoch ms).
 * @param workspaceGone Whether the workspace's folder or data folder is gone.
 * @param quietMs How long no removal may have been journaled. @default {REMOVAL_QUIET_MS}
 * @returns Milliseconds to wait (0: send now), or `null`: never.
 * @example
 * ```ts
 * import { equal } from "node:assert/strict";
 * equal(removalWait({ oldestMs: 9_000, newestMs: 10_000, count: 3 }, 10_400, false), 600);
 * equal(removalWait({ oldestMs: 9_000, newestMs: 10_000, count: 3 }, 11_000, false), 0);
 * equal(removalWait({ oldestMs: 0, newestMs: 9_900, count: 3 }, 10_000, false), 0); // held long enough
 * equal(removalWait({ oldestMs: 0, newestMs: 9_900, count: 5_000 }, 10_000, false), 2_900);
 * equal(removalWait({ oldestMs: 9_000, newestMs: 10_000, count: 3 }, 11_000, true), null);
 * ```
 */
export function removalWait(
  pending: PendingRemovals | null,
  nowMs: number,
  workspaceGone: boolean,
  quietMs: number = REMOVAL_QUIET_MS,
): number | null {
  if (workspaceGone) return null;
  if (pending === null) return 0;
  const mass = pending.count >= MASS_REMOVALS;
  const quiet = mass ? Math.max(quietMs, MASS_REMOVAL_QUIET_MS) : quietMs;
  const holdMax = mass ? MASS_REMOVAL_HOLD_MAX_MS : REMOVAL_HOLD_MAX_MS;
  const until = Math.min(pending.newestMs + quiet, pending.oldestMs + holdMax);
  return Math.max(0, until - nowMs);
}
