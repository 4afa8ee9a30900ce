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

/**
 * Paces a long run of work whose awaits settle at once (synchronous file and database calls
 * behind async functions, frames written to a buffer): {@linkcode Pacer.tick} after each
 * unit says when to give the event loop a turn, so timers, sockets and HTTP requests are
 * served while it runs. A turn is due once `ms` of work have passed since the last one, or
 * `count` units when given (a unit's cost can swing: a look at a file waits on a busy disk).
 *
 * @example A loop that yields every 10 ms of work
 * ```ts
 * import { Pacer } from "./next_turn.ts";
 * const pace = new Pacer({ ms: 10 });
 * for (let i = 0; i < 1000; i++) {
 *   // ... one unit of synchronous work ...
 *   const turn = pace.tick();
 *   if (turn) await turn;
 * }
 * ```
 */
export class Pacer {
  readonly #ms: number;
  readonly #count: number;
  #units = 0;
  #since = performance.now();

  /**
   * Makes a pacer whose first turn is due `ms` from now.
   *
   * @param options `ms`: work between two turns, at most; `count`: units between two
   * turns, at most (no bound by default).
   */
  constructor(options: { ms: number; count?: number }) {
    this.#ms = options.ms;
    this.#count = options.count ?? Infinity;
  }

  /**
   * Notes one unit of work done (or, with `counted` false, only the time its handling took).
   *
   * @returns A promise of the event loop's next turn when one is due, to await; else nothing.
   */
  tick(counted = true): Promise<void> | undefined {
    if (counted) this.#units++;
    if (this.#units < this.#count && performance.now() - this.#since < this.#ms) return;
    this.#units = 0;
    return nextTurn().then(() => {
      this.#since = performance.now();
    });
  }
}
