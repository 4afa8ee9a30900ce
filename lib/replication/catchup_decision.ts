/** What the master does with a `CatchupRequest` (PROTOCOL.md §4). */
export type CatchupDecision =
  /** Replay the latest iteration of each path changed after `since`. */
  | { kind: "replay"; since: number }
  /** Answer `FullResyncRequired` with this reason. */
  | { kind: "resync"; reason: string };

/** The facts {@linkcode decideCatchup} needs. */
export interface CatchupFacts {
  /** The replica's highest applied sequence. */
  since: number;
  /** The master's current sequence. */
  current: number;
  /**
   * The oldest sequence the master can still replay after: changes at or below it may
   * have been forgotten. 0 when the whole history is kept.
   */
  floor: number;
}

/**
 * Decides whether the master can bring a replica up to date from `since`, or the replica
 * must reconcile from scratch. Pure.
 *
 * @param facts The replica's position and the master's history bounds.
 * @returns The decision, with a reason for a resync.
 *
 * @example
 * ```ts
 * import { decideCatchup } from "./catchup_decision.ts";
 * const d = decideCatchup({ since: 10, current: 5, floor: 0 });
 * if (d.kind !== "resync") throw new Error("a replica ahead of the master must resync");
 * ```
 */
export function decideCatchup(facts: CatchupFacts): CatchupDecision {
  const { since, current, floor } = facts;
  if (since > current) {
    return {
      kind: "resync",
      reason: `replica is at sequence ${since}, ahead of the master's ${current}`,
    };
  }
  // since 0 asks for everything: the latest iteration of every path is always there.
  if (since !== 0 && since < floor) {
    return {
      kind: "resync",
      reason: `history after sequence ${since} is gone (kept from ${floor})`,
    };
  }
  return { kind: "replay", since };
}
