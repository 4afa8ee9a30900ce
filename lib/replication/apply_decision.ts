import type { MasterVersion, ReplicaPathState } from "./replica_paths.ts";

/** The replica's current local state of a path: its latest iteration in the replica store. */
export interface LocalVersion {
  /** Content hash, `""` when deleted. */
  hash: string;
  /** Full `st_mode`. */
  mode: number;
  /** Whether the path is deleted (or was never there). */
  deleted: boolean;
}

/** What to do with a master version arriving at a replica. */
export type ApplyAction =
  /** The path is excluded from master-to-replica replication here. */
  | "skip-filtered"
  /** This replica's own later write, already accepted, supersedes it. */
  | "skip-superseded"
  /** Own write-backs of the path await an answer: hold it back. */
  | "defer"
  /** The replica already holds exactly this: only remember it as applied. */
  | "noop"
  /** Write the content. */
  | "write"
  /** Remove the path. */
  | "remove";

/** The facts {@linkcode decideApply} weighs. */
export interface ApplyFacts {
  /** The arriving master version. */
  version: MasterVersion;
  /** What the replica holds locally. */
  local: LocalVersion;
  /** What the replica knows of the path's master side. */
  state: ReplicaPathState;
  /**
   * Whether the path, or a path holding it, has journal entries the master has not
   * answered, or answered with a release not run yet.
   */
  pendingWriteBack: boolean;
  /** Whether the replica's master-to-replica filter excludes the path. */
  filtered: boolean;
  /**
   * Whether a rejected write-back of the path waits for a person (local-sync): the local
   * file is left alone until the conflict is resolved. @default {false}
   */
  unresolvedConflict?: boolean;
}

/**
 * Decides how a replica applies a master version of a path (a notification, or a
 * deferred one released after its write-backs were answered). Pure.
 *
 * @param facts See {@linkcode ApplyFacts}.
 * @returns The action.
 *
 * @example Content already held needs no write
 * ```ts
 * import { decideApply } from "./apply_decision.ts";
 * const action = decideApply({
 *   version: { sequence: 5, hash: "h", mode: 0o100644, deleted: false },
 *   local: { hash: "h", mode: 0o100644, deleted: false },
 *   state: { path: "a", applied: { sequence: 0, hash: "", mode: 0, deleted: true }, acceptedSeq: 0, deferred: null },
 *   pendingWriteBack: false,
 *   filtered: false,
 * });
 * if (action !== "noop") throw new Error(action);
 * ```
 */
export function decideApply(facts: ApplyFacts): ApplyAction {
  const { version, local, state } = facts;
  if (facts.filtered) return "skip-filtered";
  if (version.sequence < state.acceptedSeq) return "skip-superseded";
  if (facts.pendingWriteBack || facts.unresolvedConflict) return "defer";
  if (version.deleted) return local.deleted ? "noop" : "remove";
  if (!local.deleted && local.hash === version.hash && local.mode === version.mode) return "noop";
  return "write";
}

/** The first wait before versions held back because their paths kept changing are weighed again. */
export const UNSETTLED_RETRY_MIN_MS = 100;
/** The longest such wait: a path rewritten without end costs one more look this often. */
export const UNSETTLED_RETRY_MAX_MS = 5000;

/**
 * How long a replica waits before it weighs again the master versions it held back
 * because their paths kept changing on disk (`VersionApplier`): twice the last wait while
 * they keep changing (asked again within twice the last wait of the last retry), the
 * shortest again once they settled for longer, never more than
 * {@linkcode UNSETTLED_RETRY_MAX_MS}. Pure.
 *
 * @param lastWaitMs The last wait, 0 when none.
 * @param sinceLastRetryMs Milliseconds since the last retry ran (`Infinity` when none).
 * @returns The wait in milliseconds.
 *
 * @example A path rewritten again right after its retry: the wait doubles
 * ```ts
 * import { unsettledRetryDelay } from "./apply_decision.ts";
 * if (unsettledRetryDelay(200, 5) !== 400) throw new Error("not doubled");
 * ```
 */
export function unsettledRetryDelay(lastWaitMs: number, sinceLastRetryMs: number): number {
  if (lastWaitMs <= 0 || sinceLastRetryMs > 2 * lastWaitMs) return UNSETTLED_RETRY_MIN_MS;
  return Math.min(2 * lastWaitMs, UNSETTLED_RETRY_MAX_MS);
}
