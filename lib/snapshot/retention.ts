import type { SnapshotConfig } from "./types.ts";

/** One of the oldest snapshots, as retention sees it. */
export interface PruneCandidate {
  /** The snapshot's number in the chain. */
  number: number;
  /** Epoch milliseconds. */
  timestamp: number;
  /** The transaction it belongs to, or `null`. */
  transactionId: string | null;
}

/** Input of {@linkcode planPrune}. */
export interface PruneInput {
  /** The oldest snapshots, ascending by number, starting at the anchor (more may follow). */
  oldest: readonly PruneCandidate[];
  /** Number of the oldest retained snapshot. */
  anchorNumber: number;
  /** Number of the newest snapshot. */
  headNumber: number;
  /** Epoch milliseconds now. */
  now: number;
  /** The retention limits in force. */
  config: SnapshotConfig;
  /** IDs of transactions still active: their snapshots are never pruned. */
  activeTransactions: ReadonlySet<string>;
}

/** Milliseconds in a day, the unit of `maxAgeDays`. */
const DAY_MS = 86_400_000;

/** The time (epoch ms) before which a snapshot is older than `maxAgeDays` at `now`. */
export function ageCutoff(now: number, config: { maxAgeDays: number }): number {
  return now - config.maxAgeDays * DAY_MS;
}

/**
 * Decides how many of the oldest snapshots to prune. Pure.
 *
 * A snapshot is due when more than `maxSnapshots` snapshots are at or after it, or when it
 * is older than `maxAgeDays`. Only an unbroken run from the oldest is pruned, so the chain
 * stays one verifiable piece from a single anchor: the run stops at the first snapshot
 * that is not due, that belongs to an active transaction, or that is the newest.
 *
 * @param input The oldest snapshots and the limits.
 * @returns The number of the last snapshot to prune, or 0 to prune none.
 *
 * @example Keeping two of three
 * ```ts
 * import { planPrune } from "./retention.ts";
 * const oldest = [1, 2, 3].map((number) => ({ number, timestamp: 0, transactionId: null }));
 * const last = planPrune({
 *   oldest, anchorNumber: 1, headNumber: 3, now: 0,
 *   config: { maxSnapshots: 2, maxAgeDays: 30 }, activeTransactions: new Set(),
 * });
 * if (last !== 1) throw new Error(`pruned through ${last}`);
 * ```
 */
export function planPrune(input: PruneInput): number {
  const cutoff = ageCutoff(input.now, input.config);
  let last = 0;
  let expected = input.anchorNumber;
  for (const candidate of input.oldest) {
    if (candidate.number !== expected || candidate.number >= input.headNumber) break;
    const overCount = input.headNumber - candidate.number + 1 > input.config.maxSnapshots;
    const overAge = candidate.timestamp < cutoff;
    if (!overCount && !overAge) break;
    if (candidate.transactionId && input.activeTransactions.has(candidate.transactionId)) break;
    last = candidate.number;
    expected++;
  }
  return last;
}
