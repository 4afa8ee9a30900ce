/**
 * When the OS watcher has stopped reporting: the decisions of the watch probe (see
 * `TreeWatcher`). Deno's watcher can wait forever on one event (a named pipe made while it
 * runs, which it opens to compare paths: see `PipeHolder`), and then no change anywhere is
 * reported until a scan finds the pipe and holds it, which a large tree's safety rescans do
 * only every minute or so. So while no event comes, the watcher is handed one of its own:
 * a file in the data folder, watched on its own, is touched; an event heard after it shows
 * the watcher still reports. Heard nothing for {@linkcode STALL_MS} after the touch, the
 * watcher counts as stalled: reported once (as lost events, which have the workspace
 * scanned), until it is heard again.
 *
 * @module
 */

/** How often the probe looks, ms. */
export const PROBE_TICK_MS = 500;

/** How long the watcher may be quiet before it is touched, ms. */
export const PROBE_IDLE_MS = 1000;

/** How long after the touch the watcher, still silent, counts as stalled, ms. */
export const STALL_MS = 2000;

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
  /** Whether the stall of this silence was reported already. */
  stalled: boolean;
}

/** What happened: an event heard, or a tick of the probe's timer. */
export type ProbeInput =
  | { type: "heard"; nowMs: number }
  | { type: "tick"; nowMs: number; lateMs: number };

/** What to do: touch the probe, report the stall, say the watcher reports again, or nothing. */
export type ProbeAction = "touch" | "stalled" | "recovered" | null;

/**
 * The probe's state when watching starts at `nowMs`.
 *
 * @param nowMs Now (epoch ms).
 * @returns Heard now, nothing waiting.
 */
export function probeStart(nowMs: number): ProbeState {
  return { heardAt: nowMs, touchedAt: null, stalled: false };
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
      state: { heardAt: now, touchedAt: null, stalled: false },
      action: state.stalled ? "recovered" : null,
    };
  }
  if (state.touchedAt === null) {
    if (now - state.heardAt < PROBE_IDLE_MS) return { state, action: null };
    return { state: { ...state, touchedAt: now }, action: "touch" };
  }
  if (state.stalled || input.lateMs > LATE_TICK_MS || now - state.touchedAt < STALL_MS) {
    return { state, action: null };
  }
  return { state: { ...state, stalled: true }, action: "stalled" };
}
