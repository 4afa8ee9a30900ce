/**
 * Waits for the event loop's next turn, in which timers that are due and I/O that is ready
 * run first. Work that awaits only promises already settled (synchronous file operations
 * behind async functions) never gives them that turn, however long it runs: the heap
 * keeper's look at the heap, a heartbeat, a socket's data all wait for its end. A long loop
 * of such work calls this between its pieces.
 *
 * @returns A promise settled in the next turn.
 *
 * @example A timer runs in between
 * ```ts
 * import { nextTurn } from "./next_turn.ts";
 * let ran = false;
 * setTimeout(() => (ran = true), 0);
 * await Promise.resolve(); // a settled promise: the timer has not run yet
 * if (ran) throw new Error("ran too early");
 * await nextTurn();
 * if (!ran) throw new Error("the timer did not run");
 * ```
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
