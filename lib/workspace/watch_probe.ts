/**
 * When the OS watcher has stopped reporting: the decisions of the watch probe (see
 * `TreeWatcher`). Deno's watcher can wait forever on one event (a named pipe made while it
 * runs, which it opens to compare paths: see `PipeHolder`), and then no change anywhere is
 * reported until a scan finds the pipe and holds it, which a large tree's safety rescans do
 * only every minute or so. So while no event comes, the watcher is handed one of its own:
 * a file in the data folder, watched on its own, is touched; an event heard after it shows
 * the watcher still reports. Heard nothing for {@linkcode STALL_MS} after the touch, the
 * watcher counts as stalled: reported once (as lost events, which have the workspace
 * scanned, and the scan holds the pipe), until it is heard again.
 *
 * A stall the scan cannot end (a pipe in a folder no scan walks, or one removed while the
 * watcher waits on it, which nothing can open any more) lasts: after
 * {@linkcode STALL_RESTART_MS} the watcher is made again on a new thread (Deno's watcher is
 * one per thread), the stuck one left waiting. At most {@linkcode MAX_RESTARTS} times for
 * one watcher (each leaves a thread and its kernel watches behind); then the safety
 * rescans alone find changes.
 *
 * @module
 */

/** How often the probe looks, ms. */
export const PROBE_TICK_MS = 500;

/** How long the watcher may be quiet before it is touched, ms. */
export const PROBE_IDLE_MS = 1000;

/** How long after the touch the watcher, still silent, counts as stalled, ms. */
export const STALL_MS = 2000;

/** How long a stall may last before the watcher is made again on a new thread, ms. */
export const STALL_RESTART_MS = 20_000;

/** How many times one watcher is made again for stalls. */
export const MAX_RESTARTS = 3;

/**
 * A tick this much later than due is not judged: the thread was busy, and what the watcher
 * said meanwhile may still wait in its queue.
 */
export const LATE_TICK_MS = 500;

/** Where the probe stands. */
export interface ProbeState {
  /** When an event was last heard (epoch ms). */
  heardAt: number;
  /** When the probe was touched with no event heard since (epoch ms); `null`: none waits. */
  touchedAt: number | null;
  /** When the stall of this silence was reported (epoch ms); `null`: none was. */
  stalledAt: number | null;
  /** How many times the watcher was made again for a stall. */
  restarts: number;
}

/** What happened: an event heard, or a tick of the probe's timer. */
export type ProbeInput =
  | { type: "heard"; nowMs: number }
  | { type: "tick"; nowMs: number; lateMs: number };

/**
 * What to do: touch the probe, report the stall, make the watcher again on a new thread,
 * say that it will not be made again, say the watcher reports again, or nothing.
 */
export type ProbeAction = "touch" | "stalled" | "restart" | "giveUp" | "recovered" | null;

/**
 * The probe's state when watching starts at `nowMs`.
 *
 * @param nowMs Now (epoch ms).
 * @param restarts How many times the watcher was made again for a stall before.
 * @returns Heard now, nothing waiting.
 */
export function probeStart(nowMs: number, restarts = 0): ProbeState {
  return { heardAt: nowMs, touchedAt: null, stalledAt: null, restarts };
}

/**
 * The probe's next state and action. Pure.
 *
 * Any event counts as heard, not only the probe's own: while changes come, nothing is
 * touched, and a stall shows once they stop (what came before it is handed over first).
 *
 * @param state Where it stands.
 * @param input What happened.
 * @returns The next state, and what to do.
 * @example
 * ```ts
 * import { equal } from "node:assert/strict";
 * let state = probeStart(0);
 * let action;
 * ({ state, action } = probeStep(state, { type: "tick", nowMs: 1000, lateMs: 0 }));
 * equal(action, "touch");
 * ({ state, action } = probeStep(state, { type: "tick", nowMs: 3000, lateMs: 0 }));
 * equal(action, "stalled");
 * ({ state, action } = probeStep(state, { type: "heard", nowMs: 9000 }));
 * equal(action, "recovered");
 * ```
 */
export function probeStep(
  state: ProbeState,
  input: ProbeInput,
): { state: ProbeState; action: ProbeAction } {
  const now = input.nowMs;
  if (input.type === "heard") {
    return {
      state: probeStart(now, state.restarts),
      action: state.stalledAt !== null ? "recovered" : null,
    };
  }
  if (state.touchedAt === null) {
    if (now - state.heardAt < PROBE_IDLE_MS) return { state, action: null };
    return { state: { ...state, touchedAt: now }, action: "touch" };
  }
  if (input.lateMs > LATE_TICK_MS) return { state, action: null };
  if (state.stalledAt === null) {
    if (now - state.touchedAt < STALL_MS) return { state, action: null };
    return { state: { ...state, stalledAt: now }, action: "stalled" };
  }
  if (now - state.stalledAt < STALL_RESTART_MS || state.restarts > MAX_RESTARTS) {
    return { state, action: null };
  }
  if (state.restarts === MAX_RESTARTS) {
    return { state: { ...state, restarts: MAX_RESTARTS + 1 }, action: "giveUp" };
  }
  // Made again: touched anew once the new watcher runs (its events reset this).
  return {
    state: {
      ...state,
      touchedAt: null,
      stalledAt: null,
      heardAt: now,
      restarts: state.restarts + 1,
    },
    action: "restart",
  };
}
