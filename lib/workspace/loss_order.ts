/**
 * The order of changes after the OS lost file events (see {@linkcode nextLossState}).
 *
 * Deno's queue of file events holds few events; when the event loop is busy, it drops the
 * rest and then reports the loss (an event with a `rescan` flag), and the events after that
 * report are of changes made after the lost ones. A rescan finds the lost changes, but
 * only once it has walked the tree: what the watcher reports meanwhile is held, so that no
 * change is recorded before one made earlier that the watcher lost.
 *
 * @module
 */

/** The most paths held while a loss is open; beyond it they are left to a scan. */
export const HELD_PATHS_MAX = 2048;
/** The most bytes of paths held while a loss is open; beyond it they are left to a scan. */
export const HELD_BYTES_MAX = 1 << 20;

/** What {@linkcode nextLossState} keeps: counts only, the held paths are the executor's. */
export interface LossState {
  /** Losses reported so far (a held set given up counts as one). */
  losses: number;
  /** The most losses a finished scan covered: its walk started after all of them. */
  covered: number;
  /** Paths held now. */
  held: number;
  /** Bytes of the paths held now. */
  heldBytes: number;
}

/** What happened: the executor reports each of these, in order. */
export type LossInput =
  /** The OS reported lost events. */
  | { type: "lost" }
  /** The watcher reported changes at `count` paths of `bytes` bytes. */
  | { type: "event"; count: number; bytes: number }
  /**
   * A scan ended (or failed: its slices may have been cut short, but a scan failing every
   * time must not stop the watcher from recording); `from` is `losses` when its walk began.
   */
  | { type: "scanEnded"; from: number }
  /** The watcher stopped: what it held is left to the scan resuming it. */
  | { type: "stopped" };

/**
 * What the executor does, in this order:
 * - `dropPending`: forget the events waiting for their quiet time or their capture (made
 *   before the loss, they are found by the scan that covers it, in the order made);
 * - `dropHeld`: forget the held paths (a scan whose walk begins after now records them);
 * - `rescan`: a scan soon (or once more after the running one);
 * - `pass`: the event's paths go on to the debouncer, as when nothing was lost;
 * - `hold`: the event's paths are held;
 * - `release`: the held paths go on to the debouncer (as if reported now), and are forgotten.
 */
export type LossAction = "dropPending" | "dropHeld" | "rescan" | "pass" | "hold" | "release";

/** No loss reported, nothing held. */
export const NO_LOSS: LossState = { losses: 0, covered: 0, held: 0, heldBytes: 0 };

/**
 * Decides what follows a loss of file events, one input at a time. Pure.
 *
 * While a loss is open (reported, and no scan whose walk began after it has ended yet), the
 * watcher's events are held. The scan records what it finds in the order the files were
 * changed (by modification time); once it ends with no loss open, the held paths go on
 * as if reported then. A loss reported while a scan walks keeps the loss open past that
 * scan: the held paths are then dropped, for the next scan (whose walk begins after every
 * held change was made) to record, so that nothing is held for longer than the next scan
 * takes, even when events are lost all the time. Held paths beyond {@linkcode HELD_PATHS_MAX} or
 * {@linkcode HELD_BYTES_MAX} count as a loss of their own: memory stays bounded.
 *
 * @param state The state before.
 * @param input What happened.
 * @returns The state after, and what the executor does.
 * @example
 * ```ts
 * let { state } = nextLossState(NO_LOSS, { type: "lost" }); // drop pending, rescan
 * const from = state.losses; // the scan's walk begins
 * ({ state } = nextLossState(state, { type: "event", count: 1, bytes: 5 })); // hold
 * nextLossState(state, { type: "scanEnded", from }).actions; // ["release"]
 * ```
 */
export function nextLossState(
  state: LossState,
  input: LossInput,
): { state: LossState; actions: LossAction[] } {
  const open = state.losses > state.covered;
  switch (input.type) {
    case "lost":
      return {
        state: { ...state, losses: state.losses + 1, held: 0, heldBytes: 0 },
        actions: ["dropPending", "dropHeld", "rescan"],
      };
    case "event": {
      if (!open) return { state, actions: ["pass"] };
      const held = state.held + input.count;
      const heldBytes = state.heldBytes + input.bytes;
      if (held <= HELD_PATHS_MAX && heldBytes <= HELD_BYTES_MAX) {
        return { state: { ...state, held, heldBytes }, actions: ["hold"] };
      }
      // Too many to hold: all of them, this event's too, left to a scan beginning now.
      return {
        state: { ...state, losses: state.losses + 1, held: 0, heldBytes: 0 },
        actions: ["dropHeld", "rescan"],
      };
    }
    case "scanEnded": {
      const covered = Math.max(state.covered, input.from);
      const after = { ...state, covered, held: 0, heldBytes: 0 };
      // Still open: a scan beginning after now records what was held (and what was lost).
      if (state.losses > covered) {
        return { state: after, actions: state.held ? ["dropHeld", "rescan"] : ["rescan"] };
      }
      return { state: after, actions: state.held ? ["release"] : [] };
    }
    case "stopped":
      return { state: { ...state, held: 0, heldBytes: 0 }, actions: ["dropHeld"] };
  }
}
