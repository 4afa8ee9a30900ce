import type { Clock } from "../../lib/concurrency/mod.ts";

/** One armed timer of a {@linkcode ManualClock}. */
interface Armed {
  at: number;
  callback: () => void;
}

/**
 * A {@linkcode Clock} that moves only when the test says: `advance(ms)` fires, in order of
 * their due time, the timers due by then. A driver given one runs with no real timer, so a
 * test steps heartbeats, deadlines and timeouts deterministically.
 */
export class ManualClock implements Clock {
  #now: number;
  #nextId = 1;
  readonly #armed = new Map<number, Armed>();

  /** @param start The epoch milliseconds it starts at. */
  constructor(start = 1_700_000_000_000) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  set(callback: () => void, ms: number): number {
    const id = this.#nextId++;
    this.#armed.set(id, { at: this.#now + Math.max(0, ms), callback });
    return id;
  }

  clear(timer: unknown): void {
    if (typeof timer === "number") this.#armed.delete(timer);
  }

  /** The delays, from now, of the timers armed and not yet fired or cleared, soonest first. */
  pending(): number[] {
    return [...this.#armed.values()].map((timer) => timer.at - this.#now).sort((a, b) => a - b);
  }

  /**
   * Moves time forward by `ms`, firing every timer due by then at its own time, soonest
   * first (a timer armed by a callback fires too when it falls due within the span).
   *
   * @returns How many timers fired.
   */
  advance(ms: number): number {
    const end = this.#now + ms;
    let fired = 0;
    while (true) {
      let next: [number, Armed] | undefined;
      for (const entry of this.#armed) {
        if (entry[1].at <= end && (!next || entry[1].at < next[1].at)) next = entry;
      }
      if (!next) break;
      this.#armed.delete(next[0]);
      this.#now = next[1].at;
      next[1].callback();
      fired++;
    }
    this.#now = end;
    return fired;
  }
}
