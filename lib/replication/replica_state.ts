import { wirePathProblem } from "../paths/mod.ts";
import type { WireMessage } from "../wire/mod.ts";
import type { JournalEntry } from "./write_journal.ts";
import { reasonWord } from "./write_back_decision.ts";
import type {
  ReleasedPath,
  ReplicaAction,
  ReplicaEvent,
  ReplicaMode,
  ReplicaState,
  ReplicaStep,
} from "./replica_state_types.ts";

export type {
  ApplyItem,
  BarrierResult,
  ReleasedPath,
  ReplicaAction,
  ReplicaEvent,
  ReplicaMode,
  ReplicaState,
  ReplicaStep,
} from "./replica_state_types.ts";

/**
 * A catch-up spanning at least this many sequences is large: it shows progress, and the
 * workspace's watcher is suspended while it is applied (see `Workspace.suspendWatching`).
 * So is a live notification this far ahead of what is applied (a burst: a large change on
 * the master, arriving faster than it is applied), until all received is applied. Each
 * file applied would otherwise come back as an event to capture, and a busy replica's
 * watcher loses events and scans the workspace anyway: a large change took a third longer
 * to apply with the watcher on.
 */
export const LARGE_CATCHUP = 500;
/** Acks sent at least this often while applying a long replay. */
export const ACK_EVERY = 256;

/** The longest a replica waits for a silent master: see {@linkcode nextSilenceMs}. */
export const MAX_SILENCE_MS = 60_000;

/**
 * The master's silence a replica tolerates on its first connection: five heartbeats, and
 * at least 3 s.
 *
 * @param heartbeatMs The master's heartbeat interval.
 * @returns Milliseconds.
 */
export function baseSilenceMs(heartbeatMs: number): number {
  return Math.max(3000, 5 * heartbeatMs);
}

/**
 * The master's silence tolerated on the next connection, after one ended. A connection left
 * because the master was silent doubles it, up to {@linkcode MAX_SILENCE_MS}: a master
 * whose machine is saturated (it takes in a large change with replicas on the same cores)
 * or a link slow enough that one large frame takes longer than the limit to arrive (a
 * WebSocket hands over whole messages only) would otherwise be left again and again, each
 * time throwing away what was in flight. A master that closed or lost the connection is
 * noticed at once all the same; the limit only bounds how long a connection that stays
 * open but carries nothing is trusted. A connection that reached live and ended otherwise
 * goes back to the base. Pure.
 *
 * @param current The limit of the connection that ended.
 * @param base The first connection's limit ({@linkcode baseSilenceMs}).
 * @param ended How it ended: left for silence, and whether it had reached live.
 * @returns Milliseconds.
 * @example
 * ```ts
 * nextSilenceMs(5000, 5000, { silent: true, reachedLive: true }); // 10000
 * ```
 */
export function nextSilenceMs(
  current: number,
  base: number,
  ended: { silent: boolean; reachedLive: boolean },
): number {
  if (ended.silent) return Math.min(Math.max(current, base) * 2, Math.max(MAX_SILENCE_MS, base));
  return ended.reachedLive ? base : current;
}

/** Where a connection starts from. */
export interface ReplicaStart {
  /** How rejected write-backs are treated. */
  mode: ReplicaMode;
  /** Silence of the master tolerated, in milliseconds. */
  silenceMs: number;
  /** The data folder's name when it lies inside the workspace. */
  dataDirInside?: string | undefined;
  /** The highest master sequence applied here. */
  applied: number;
  /** The master's sequence as last heard. */
  masterSequence: number;
  /** Whether a resync was left unfinished (it starts over). */
  resyncPending: boolean;
  /** The time now. */
  now: number;
}

/**
 * A connection's state before its first message.
 *
 * @param start Where the replica stands.
 * @returns The state.
 */
export function initialReplicaState(start: ReplicaStart): ReplicaState {
  return {
    mode: start.mode,
    silenceMs: start.silenceMs,
    dataDirInside: start.dataDirInside,
    applied: start.applied,
    masterSequence: start.masterSequence,
    resync: start.resyncPending ? { target: null } : null,
    resyncApplied: 0,
    since: 0,
    catchupSent: false,
    catchupTarget: null,
    reachedLive: false,
    highestReceived: 0,
    burstPaused: false,
    askedForResync: false,
    barriers: [],
    lastAcked: 0,
    sinceAck: 0,
    ackInFlight: false,
    ackAgain: false,
    releasing: new Map(),
    lastHeardAt: start.now,
    leftSilent: false,
  };
}

/**
 * The replica's side of one connection, as transitions: routing the master's messages,
 * the catch-up and its probe, heartbeats and barriers, a full resync, acknowledgements and
 * the releases of answered write-backs. Pure: the caller (`ReplicaSession`) applies the
 * actions; applying notifications themselves is the apply pipeline's (`replica_apply.ts`).
 *
 * @param state The connection's state.
 * @param event What happened.
 * @returns The new state and the actions to run, in order.
 *
 * @example
 * ```ts
 * import { initialReplicaState, stepReplica } from "./replica_state.ts";
 * const start = initialReplicaState({
 *   mode: "sandbox", silenceMs: 3000, applied: 4, masterSequence: 4, resyncPending: false, now: 0,
 * });
 * const { actions } = stepReplica(start, { type: "catchup" });
 * if (actions[1]?.type !== "requestCatchup") throw new Error("a catch-up after sequence 4");
 * ```
 */
export function stepReplica(state: ReplicaState, event: ReplicaEvent): ReplicaStep {
  switch (event.type) {
    case "message":
      return received({ ...state, lastHeardAt: event.now }, event.message);
    case "paused":
      return { state: { ...state, lastHeardAt: event.now }, actions: [] };
    case "tick":
      return tick(state, event.now, event.fetching);
    case "catchup":
      return requestCatchup(state);
    case "heartbeat":
      return certified(state, event.sequence, true);
    case "confirmation":
      return confirmation(state, event.current, event.satisfied);
    case "resyncRequired":
      return resyncRequired(state, event.current, event.reason);
    case "resyncSwept":
      return {
        state: { ...state, resync: null, applied: event.sequence, reachedLive: true },
        actions: [
          { type: "resyncDone", sequence: event.sequence, removed: event.removed },
          { type: "finishProgress" },
          { type: "resumeWatching" },
        ],
      };
    case "barrier":
      return {
        state: { ...state, barriers: [...state.barriers, { id: event.id, purpose: "wait" }] },
        actions: [{ type: "sendBarrier" }],
      };
    case "applied": {
      // A replay crosses sequences in order: everything up to the last one is applied.
      // During a resync the position waits for the sweep of paths the master no longer has.
      const sinceAck = state.sinceAck + event.count;
      if (state.resync) {
        const resyncApplied = Math.max(state.resyncApplied, event.last);
        return { state: { ...state, resyncApplied, sinceAck }, actions: [] };
      }
      const applied = event.last > state.applied ? event.last : state.applied;
      return { state: { ...state, applied, sinceAck }, actions: [] };
    }
    case "cut":
      return state.resync ? { state, actions: [] } : {
        state: { ...state, applied: event.applied },
        actions: [],
      };
    case "handled":
      return event.queued === 0 || state.sinceAck >= ACK_EVERY
        ? ack(state)
        : { state, actions: [] };
    case "ackSent":
      return state.ackAgain
        ? {
          state: { ...state, ackAgain: false, ackInFlight: true },
          actions: [{ type: "sendAck", sequence: state.lastAcked }],
        }
        : { state: { ...state, ackInFlight: false }, actions: [] };
    case "answered":
      return answered(state, event.entries);
    case "release": {
      const releasing = new Map(state.releasing);
      for (const { path } of event.paths) {
        const left = (releasing.get(path) ?? 1) - 1;
        if (left > 0) releasing.set(path, left);
        else releasing.delete(path);
      }
      return {
        state: { ...state, releasing },
        actions: [{ type: "releaseAll", paths: event.paths }],
      };
    }
  }
}

/** Routes a message: answers go straight to their owners, the rest is applied in order. */
function received(state: ReplicaState, msg: WireMessage): ReplicaStep {
  switch (msg.type) {
    case "Notification": {
      const path = msg.filepath;
      const wrong = wirePathProblem(path, state.dataDirInside);
      if (wrong?.escapes) {
        return {
          state,
          actions: [close(`notification for a path leaving the workspace: "${path}"`)],
        };
      }
      // Skipped, not fatal: a later heartbeat moves the position past it.
      if (wrong) {
        return {
          state,
          actions: [{ type: "problem", path, reason: `not applied: ${wrong.problem}` }],
        };
      }
      const sequence = Number(msg.sequence);
      const next = { ...state, highestReceived: Math.max(state.highestReceived, sequence) };
      const apply: ReplicaAction[] = [
        { type: "prefetch", message: msg },
        { type: "enqueue", item: msg },
      ];
      if (!startsBurst(next, sequence)) return { state: next, actions: apply };
      return {
        state: { ...next, burstPaused: true },
        actions: [{ type: "pauseWatching", burst: true }, ...apply],
      };
    }
    case "FullResyncRequired":
      // Every answer on this connection counts in the numbering the resync reaches (a
      // replaced master starts again); what was accepted before it does not.
      return { state, actions: [{ type: "forgetAccepted" }, { type: "enqueue", item: msg }] };
    case "Heartbeat":
    case "BarrierConfirmation":
      return { state, actions: [{ type: "enqueue", item: msg }] };
    case "ContentFetchResponse":
    case "ContentNotFound":
    case "WriteBackResult":
      return { state, actions: [{ type: "answer", message: msg }] };
    default:
      return { state, actions: [close(`unexpected ${msg.type} from the master`)] };
  }
}

/**
 * Whether a live notification at `sequence` starts a burst (see {@linkcode LARGE_CATCHUP}):
 * live, no resync, not paused already, and that far ahead of what is applied.
 */
function startsBurst(state: ReplicaState, sequence: number): boolean {
  return state.reachedLive && !state.resync && !state.burstPaused &&
    sequence - state.applied >= LARGE_CATCHUP;
}

function tick(state: ReplicaState, now: number, fetching: number): ReplicaStep {
  // Before the catch-up the master is silent unless asked for content: only a fetch left
  // unanswered counts as its silence then.
  const heard = !state.catchupSent && fetching === 0 ? now : state.lastHeardAt;
  const next = heard === state.lastHeardAt ? state : { ...state, lastHeardAt: heard };
  if (now - heard > state.silenceMs) {
    return {
      state: { ...next, leftSilent: true },
      actions: [close(`master silent for more than ${state.silenceMs} ms`)],
    };
  }
  return { state: next, actions: [] };
}

/** Asks the master to catch this replica up from what it applied, after a probe. */
function requestCatchup(state: ReplicaState): ReplicaStep {
  const since = state.resync ? 0 : state.applied;
  // The probe tells how far the master is, for progress; it certifies nothing. Both are
  // sent at once, so no barrier of syncWait() can slip in before the catch-up (the master
  // answers a barrier before a catch-up at once, certifying nothing).
  return {
    state: {
      ...state,
      since,
      catchupSent: true,
      barriers: [...state.barriers, { id: -1, purpose: "probe" }],
    },
    actions: [
      ...(state.resync ? [] : [{ type: "saveApplied" } as const]),
      { type: "requestCatchup", since },
    ],
  };
}

/** Everything up to `sequence` has been received (a heartbeat or a satisfied barrier). */
function certified(state: ReplicaState, sequence: number, heartbeat: boolean): ReplicaStep {
  const heard = { ...state, masterSequence: sequence };
  if (heard.resync) {
    const reached = heard.resync.target !== null && sequence >= heard.resync.target;
    // Everything before it in the queue is applied: acknowledged like the replay itself.
    const resyncApplied = Math.max(heard.resyncApplied, sequence);
    return {
      state: { ...heard, resyncApplied },
      actions: reached ? [{ type: "sweepResync", sequence }] : [],
    };
  }
  if (sequence < heard.applied) {
    // The master is behind what we applied: it was replaced. Ask; it will require a resync.
    if (!heartbeat || heard.askedForResync) return { state: heard, actions: [] };
    return {
      state: { ...heard, askedForResync: true },
      actions: [{ type: "askCatchup", since: heard.applied }],
    };
  }
  const applied = { ...heard, applied: sequence };
  if (applied.burstPaused && sequence >= applied.highestReceived) {
    // All the burst brought is applied: local changes are watched again.
    return { state: { ...applied, burstPaused: false }, actions: [{ type: "resumeWatching" }] };
  }
  // A heartbeat during a long replay certifies only what was sent so far.
  if (applied.reachedLive || applied.catchupTarget === null || sequence < applied.catchupTarget) {
    return { state: applied, actions: [] };
  }
  return {
    state: { ...applied, reachedLive: true },
    actions: [{ type: "finishProgress" }, { type: "inSync", sequence }, { type: "resumeWatching" }],
  };
}

function confirmation(state: ReplicaState, current: number, satisfied: boolean): ReplicaStep {
  const [barrier, ...rest] = state.barriers;
  if (!barrier) return { state, actions: [] };
  const shifted = { ...state, barriers: rest };
  if (barrier.purpose === "probe") {
    const resync = shifted.resync && shifted.resync.target === null
      ? { target: current }
      : shifted.resync;
    const probed = { ...shifted, masterSequence: current, catchupTarget: current, resync };
    if (current - probed.since < LARGE_CATCHUP) return { state: probed, actions: [] };
    const label = resync ? "full resync" : probed.since === 0 ? "initial sync" : "catch-up";
    return {
      state: probed,
      actions: [
        { type: "pauseWatching" },
        { type: "startProgress", label, from: probed.since, to: current },
      ],
    };
  }
  if (!satisfied) {
    // Not certified (asked too early): syncWait asks again.
    return { state: shifted, actions: [{ type: "resolveBarrier", id: barrier.id, result: null }] };
  }
  const after = certified(shifted, current, false);
  // A resync that reached its target is done once its sweep ran (the action before this).
  const swept = after.actions.some((action) => action.type === "sweepResync");
  const applied = swept ? current : after.state.applied;
  const done = swept || (!after.state.resync && applied >= current);
  const result = done
    ? { satisfied: true, masterSequence: current, appliedSequence: applied }
    : null;
  return {
    state: after.state,
    actions: [...after.actions, { type: "resolveBarrier", id: barrier.id, result }],
  };
}

function resyncRequired(state: ReplicaState, target: number, reason: string): ReplicaStep {
  const large = target >= LARGE_CATCHUP;
  return {
    state: { ...state, resync: { target }, resyncApplied: 0, since: 0 },
    actions: [
      { type: "startResync", target, reason },
      { type: "finishProgress" },
      ...(large
        ? [
          { type: "pauseWatching" } as const,
          { type: "startProgress", label: "full resync", from: 0, to: target } as const,
        ]
        : []),
      { type: "askCatchup", since: 0 },
    ],
  };
}

/**
 * Acknowledges what is applied. The master sends at most its window of notifications
 * beyond the last `Ack` (PROTOCOL.md §3), so this runs at least every `ACK_EVERY` applied
 * and whenever the queue runs empty (the `handled` event): every notification received is
 * acknowledged in the end, or the master would wait forever.
 */
function ack(state: ReplicaState): ReplicaStep {
  const reset = { ...state, sinceAck: 0 };
  if (reset.resync) return ackResync(reset);
  if (reset.applied <= reset.lastAcked) return { state: reset, actions: [] };
  // Durable before acknowledged; acknowledged only after the catch-up request.
  if (!reset.catchupSent) return { state: reset, actions: [{ type: "saveApplied" }] };
  return sendAck({ ...reset, lastAcked: reset.applied }, [{ type: "saveApplied" }]);
}

/**
 * During a resync the position moves only at its sweep, yet what the resync's replay
 * applied is acknowledged all the same: else the master's window would never open again.
 * It stores nothing (a resync cut short starts over) and may go below an earlier ack on
 * this connection (the replay starts from 0): the master records only a higher one.
 */
function ackResync(state: ReplicaState): ReplicaStep {
  const position = state.resyncApplied;
  if (position === 0 || position === state.lastAcked || !state.catchupSent) {
    return { state, actions: [] };
  }
  return sendAck({ ...state, lastAcked: position }, []);
}

function sendAck(acked: ReplicaState, before: ReplicaAction[]): ReplicaStep {
  // Applying must go on while our sends wait (a relay that blocks on writes would
  // otherwise stop both sides): one Ack in flight, a newer position sent once it is out.
  if (acked.ackInFlight) return { state: { ...acked, ackAgain: true }, actions: before };
  return {
    state: { ...acked, ackInFlight: true },
    actions: [...before, { type: "sendAck", sequence: acked.lastAcked }],
  };
}

/** Records the master's answers and queues what they release. */
function answered(state: ReplicaState, entries: JournalEntry[]): ReplicaStep {
  const actions: ReplicaAction[] = [];
  const release: ReleasedPath[] = [];
  for (const entry of entries) {
    const touched = entry.newPath === null ? [entry.path] : [entry.path, entry.newPath];
    if (entry.state === "accepted") {
      for (const path of touched) {
        const masterSeq = entry.masterSeq ?? 0;
        const renamedFrom = entry.newPath !== null && path === entry.path;
        actions.push({
          type: "accepted",
          path,
          masterSeq,
          localSeq: entry.localSeq,
          ...(renamedFrom ? { removed: true } : {}),
        });
        release.push({ path, restore: false });
      }
      continue;
    }
    const reason = entry.reason ?? "rejected";
    const conflict = reasonWord(reason) === "conflict";
    const sandbox = state.mode === "sandbox";
    actions.push({
      type: "rejected",
      entry,
      reason,
      conflict,
      keep: sandbox && conflict ? "upstream" : null,
    });
    if (sandbox) { for (const path of touched) release.push({ path, restore: conflict }); }
  }
  if (release.length === 0) return { state, actions };
  const releasing = new Map(state.releasing);
  for (const { path } of release) releasing.set(path, (releasing.get(path) ?? 0) + 1);
  actions.push({ type: "enqueue", item: { type: "Release", paths: release } });
  return { state: { ...state, releasing }, actions };
}

function close(reason: string): ReplicaAction {
  return { type: "close", reason };
}
