/**
 * What a replica keeps when a connection ends mid-replay (PROTOCOL.md §4, "Progress under
 * frequent cuts"): the notifications it received and could not apply, so the next
 * connection applies them first and catches up from after them. Pure.
 *
 * @module
 */

/** Anything carrying a master sequence, as a `Notification` does. */
export interface Sequenced {
  /** The master's change number. */
  sequence: bigint;
}

/** How a batch cut short by a lost content fetch splits. */
export interface CutBatch<T extends Sequenced> {
  /** Applied on this connection: every notification before the first lost one. */
  done: T[];
  /** The first lost notification and every one after it, for the next connection. */
  carry: T[];
  /** The applied position after `done` (unchanged when `done` is empty). */
  applied: number;
}

/**
 * Splits a batch, in sequence order, whose content fetches were lost from `firstLost` on.
 *
 * @param batch The notifications of the batch, in arrival (sequence) order.
 * @param firstLost The smallest sequence whose content could not be fetched.
 * @param applied The applied position before the batch.
 * @returns What was applied, what is carried, and the new applied position.
 *
 * @example
 * ```ts
 * import { splitCutBatch } from "./carry_decision.ts";
 * const batch = [{ sequence: 4n }, { sequence: 5n }, { sequence: 6n }];
 * const cut = splitCutBatch(batch, 5, 3);
 * if (cut.applied !== 4 || cut.carry.length !== 2) throw new Error("wrong split");
 * ```
 */
export function splitCutBatch<T extends Sequenced>(
  batch: readonly T[],
  firstLost: number,
  applied: number,
): CutBatch<T> {
  const done = batch.filter((msg) => Number(msg.sequence) < firstLost);
  const carry = batch.filter((msg) => Number(msg.sequence) >= firstLost);
  const last = done.length > 0 ? Number(done[done.length - 1]!.sequence) : 0;
  return { done, carry, applied: Math.max(applied, last) };
}

/**
 * The notifications the next connection applies before its catch-up: those received and
 * not applied, in order, after the applied position, at most `max` of them. A prefix only,
 * so the catch-up that follows resumes right after the last one kept and skips nothing.
 *
 * @param received Not applied, in arrival order: a cut batch's carry, then what was queued.
 * @param applied The stored applied position.
 * @param max The most kept.
 * @returns The notifications to carry.
 *
 * @example
 * ```ts
 * import { carriedNotifications } from "./carry_decision.ts";
 * const kept = carriedNotifications([{ sequence: 3n }, { sequence: 4n }], 3, 10);
 * if (kept.length !== 1) throw new Error("an applied one was kept");
 * ```
 */
export function carriedNotifications<T extends Sequenced>(
  received: readonly T[],
  applied: number,
  max: number,
): T[] {
  const kept: T[] = [];
  for (const msg of received) {
    if (kept.length >= max) break;
    if (Number(msg.sequence) > applied) kept.push(msg);
  }
  return kept;
}
