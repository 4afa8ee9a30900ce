/** Two iterations further apart than this (or by different origins) are in different bursts. */
export const BURST_GAP_MS = 30_000;

/** What {@linkcode markBursts} needs of an iteration. */
export interface BurstInput {
  /** Epoch-ms time it was recorded. */
  timestamp: number;
  /** Who made it. */
  origin: string;
}

/**
 * Marks where bursts begin in a newest-first page of iterations: an iteration starts a
 * burst when the newer one before it (the page's previous row, or `newer` for the first
 * row, the last row of the page above) is by another origin or more than `gapMs` later.
 * Since `newer` comes from the store, the marks do not depend on where pages are cut. Pure.
 *
 * @param page Iterations, newest first.
 * @param newer The iteration just newer than the page's first under the same filters, if any.
 * @param gapMs The longest pause inside a burst.
 * @returns For each iteration of `page`, whether it starts a burst.
 * @example
 * ```ts
 * import { markBursts } from "./bursts.ts";
 * const marks = markBursts([{ timestamp: 9, origin: "a" }, { timestamp: 1, origin: "a" }], undefined, 5);
 * if (marks.join() !== "true,true") throw new Error("wrong");
 * ```
 */
export function markBursts(
  page: readonly BurstInput[],
  newer: BurstInput | undefined,
  gapMs: number = BURST_GAP_MS,
): boolean[] {
  let previous = newer;
  return page.map((item) => {
    const starts = previous === undefined || previous.origin !== item.origin ||
      previous.timestamp - item.timestamp > gapMs;
    previous = item;
    return starts;
  });
}
