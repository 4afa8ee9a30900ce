/** Arms and disarms timers, as `setTimeout` and `clearTimeout` do. */
export interface Timers {
  /**
   * Calls `callback` once, after `ms` milliseconds.
   *
   * @param callback What to call.
   * @param ms The delay in milliseconds.
   * @returns A handle for {@linkcode Timers.clear}.
   */
  set(callback: () => void, ms: number): unknown;
  /**
   * Disarms the timer `set` gave this handle for; a handle of a timer that fired, or
   * `undefined`, is ignored.
   *
   * @param timer The handle.
   */
  clear(timer: unknown): void;
}

/**
 * The time and the timers a state machine's driver runs on. Code that waits, times out or
 * stamps deadlines takes one (defaulting to {@linkcode SYSTEM_CLOCK}), so a test can give
 * it a clock it advances by hand: the driver is then stepped with no real timer and no
 * sleep.
 */
export interface Clock extends Timers {
  /**
   * The current time.
   *
   * @returns Epoch milliseconds, as `Date.now()`.
   */
  now(): number;
}

/**
 * The real clock: `Date.now`, `setTimeout` and `clearTimeout`.
 *
 * @example
 * ```ts
 * import { SYSTEM_CLOCK } from "./clock.ts";
 * const timer = SYSTEM_CLOCK.set(() => {}, 1000);
 * SYSTEM_CLOCK.clear(timer);
 * if (SYSTEM_CLOCK.now() <= 0) throw new Error("epoch milliseconds");
 * ```
 */
export const SYSTEM_CLOCK: Clock = Object.freeze({
  now: () => Date.now(),
  set: (callback: () => void, ms: number) => setTimeout(callback, ms),
  // Only handles `set` above gave come back here.
  clear: (timer: unknown) => clearTimeout(timer as ReturnType<typeof setTimeout> | undefined),
});
