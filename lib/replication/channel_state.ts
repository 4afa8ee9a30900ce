import type { WireMessage } from "../wire/mod.ts";

/** How a channel is sending: not yet asked, replaying from the store, or forwarding live. */
export type ChannelMode = "idle" | "replay" | "live";

/** A `BarrierRequest` waiting for the master to reach it, or for its deadline. */
export interface PendingBarrier {
  /** The sequence the replica asked for. */
  requested: number;
  /** Epoch ms after which it is answered unsatisfied. */
  deadline: number;
}

/** The bounds a channel keeps. */
export interface ChannelLimits {
  /** Queued notifications beyond which the queue is dropped and replay repairs. */
  maxQueueItems: number;
  /** Queued bytes beyond which the queue is dropped and replay repairs. */
  maxQueueBytes: number;
  /** Milliseconds a barrier waits for an unreached sequence. */
  barrierTimeoutMs: number;
  /** Notifications sent beyond the replica's last `Ack` before the sender waits for one. */
  windowItems: number;
  /** Notification bytes sent beyond the replica's last `Ack` before the sender waits for one. */
  windowBytes: number;
}

/**
 * The protocol state of one replica's push channel (PROTOCOL.md §3–§5), without its
 * queue's contents or its connection: those stay with the executor, `PushChannel`.
 */
export interface ChannelState {
  /** How the channel is sending. */
  readonly mode: ChannelMode;
  /**
   * Every notification up to this sequence that the replica should get has been handed
   * to the transport; heartbeats and satisfied barriers carry it.
   */
  readonly sentThrough: number;
  /** Bumped by every catch-up and resync: a replay under way for an older one stops. */
  readonly generation: number;
  /** Barriers not answered yet, in arrival order. */
  readonly barriers: readonly PendingBarrier[];
  /** Times the queue overflowed and was dropped. */
  readonly overflows: number;
  /**
   * Notifications handed to the transport on this catch-up that the replica has not
   * acknowledged yet, and their bytes: the window (see {@linkcode windowOpen}).
   */
  readonly unacked: number;
  /** The bytes of the {@linkcode ChannelState.unacked} notifications. */
  readonly unackedBytes: number;
  /** The bounds. */
  readonly limits: ChannelLimits;
}

/** What happens to a channel; each carries the facts the transition needs. */
export type ChannelEvent =
  /** The replica's `CatchupRequest` was answered by a replay after `since`. */
  | { type: "catchup"; since: number }
  /** The replica must reconcile from scratch; `current` is the master's sequence. */
  | { type: "resync"; reason: string; current: number }
  /** A new iteration offered; `queued`/`queuedBytes` are the live queue's before it. */
  | { type: "offer"; bytes: number; queued: number; queuedBytes: number }
  /** Replay found nothing changed after `sentThrough`: everything newer comes live. */
  | { type: "replayed" }
  /**
   * The notification of `sequence`, of `bytes` (0: filtered, only its place), was handed to
   * the transport.
   */
  | { type: "sent"; sequence: number; bytes: number }
  /** An `Ack` released the `released` oldest unacknowledged notifications, of `releasedBytes`. */
  | { type: "acked"; released: number; releasedBytes: number }
  /** The heartbeat interval elapsed. */
  | { type: "heartbeat" }
  /** A `BarrierRequest` arrived at `now`, the master being at `current`. */
  | { type: "barrier"; requested: number; now: number; current: number }
  /** Nothing else to send: answer the barriers that can be (`queued` notifications left). */
  | { type: "idle"; now: number; current: number; queued: number };

/** What the executor does after a transition. */
export type ChannelAction =
  /** Queue a control message, sent ahead of any notification. */
  | { type: "control"; message: WireMessage }
  /** Send a message now, in order with the notifications. */
  | { type: "send"; message: WireMessage }
  /** Keep the offered item in the live queue. */
  | { type: "enqueue" }
  /** Empty the live queue. */
  | { type: "dropQueue" }
  /** Forget the notifications sent and not acknowledged: a new catch-up opens a new window. */
  | { type: "forgetUnacked" }
  /** The queue overflowed with `dropped` notifications: tell the owner. */
  | { type: "overflowed"; dropped: number }
  /** Send a heartbeat at once (replay finished: the replica learns it is caught up). */
  | { type: "heartbeatSoon" };

/** A transition's result. */
export interface ChannelStep {
  /** The new state. */
  state: ChannelState;
  /** What to do, in order. */
  actions: ChannelAction[];
}

/**
 * A channel before the replica said where it is.
 *
 * @param limits The channel's bounds.
 * @returns The `idle` state.
 */
export function initialChannelState(limits: ChannelLimits): ChannelState {
  return {
    mode: "idle",
    sentThrough: 0,
    generation: 0,
    barriers: [],
    overflows: 0,
    unacked: 0,
    unackedBytes: 0,
    limits,
  };
}

/**
 * The push channel's transitions. Pure: the caller applies the actions.
 *
 * - `idle` until a catch-up: nothing is sent but control messages; a barrier is answered
 *   at once, unsatisfied, since nothing can be certified yet.
 * - `replay` sends the latest iteration of every path changed after `sentThrough`, and
 *   turns `live` when nothing is left; `live` forwards offered iterations from a bounded
 *   queue. A queue over its bounds is dropped and the channel goes back to `replay`, which
 *   reads the store and so loses nothing.
 * - A barrier is answered satisfied once the channel is live with nothing queued, has sent
 *   through the master's sequence and that sequence reaches the one asked for; unsatisfied
 *   at its deadline.
 * - The window: notifications sent count as unacknowledged until an `Ack` covers them;
 *   while {@linkcode windowOpen} says no, the executor sends no notification (replay and
 *   live alike), only control messages, heartbeats and barrier answers. A catch-up or a
 *   resync starts a new window: the replica's acknowledgements follow the new replay.
 *
 * @param state The channel's state.
 * @param event What happened.
 * @returns The new state and the actions to apply.
 *
 * @example
 * ```ts
 * import { initialChannelState, stepChannel } from "./channel_state.ts";
 * const limits = {
 *   maxQueueItems: 2, maxQueueBytes: 100, barrierTimeoutMs: 1000, windowItems: 8, windowBytes: 800,
 * };
 * const { state } = stepChannel(initialChannelState(limits), { type: "catchup", since: 4 });
 * if (state.mode !== "replay" || state.sentThrough !== 4) throw new Error("replays after 4");
 * ```
 */
export function stepChannel(state: ChannelState, event: ChannelEvent): ChannelStep {
  switch (event.type) {
    case "catchup":
      return {
        state: {
          ...state,
          mode: "replay",
          generation: state.generation + 1,
          sentThrough: event.since,
          unacked: 0,
          unackedBytes: 0,
        },
        actions: [{ type: "dropQueue" }, { type: "forgetUnacked" }],
      };
    case "resync":
      return {
        state: {
          ...state,
          mode: "idle",
          generation: state.generation + 1,
          unacked: 0,
          unackedBytes: 0,
        },
        actions: [{ type: "dropQueue" }, { type: "forgetUnacked" }, {
          type: "control",
          message: {
            type: "FullResyncRequired",
            reason: event.reason,
            current_sequence: BigInt(event.current),
          },
        }],
      };
    case "offer": {
      // Outside live mode, replay reads the store and covers the offered iteration.
      if (state.mode !== "live") return { state, actions: [] };
      const queued = event.queued + 1;
      const { maxQueueItems, maxQueueBytes } = state.limits;
      if (queued > maxQueueItems || event.queuedBytes + event.bytes > maxQueueBytes) {
        return {
          state: { ...state, mode: "replay", overflows: state.overflows + 1 },
          actions: [{ type: "dropQueue" }, { type: "overflowed", dropped: queued }],
        };
      }
      return { state, actions: [{ type: "enqueue" }] };
    }
    case "replayed":
      if (state.mode !== "replay") return { state, actions: [] };
      return { state: { ...state, mode: "live" }, actions: [{ type: "heartbeatSoon" }] };
    case "sent": {
      const sentThrough = Math.max(state.sentThrough, event.sequence);
      // A filtered place moves the position only: nothing reached the replica.
      if (event.bytes === 0) return { state: { ...state, sentThrough }, actions: [] };
      return {
        state: {
          ...state,
          sentThrough,
          unacked: state.unacked + 1,
          unackedBytes: state.unackedBytes + event.bytes,
        },
        actions: [],
      };
    }
    case "acked":
      return {
        state: {
          ...state,
          unacked: Math.max(0, state.unacked - event.released),
          unackedBytes: Math.max(0, state.unackedBytes - event.releasedBytes),
        },
        actions: [],
      };
    case "heartbeat": {
      if (state.mode === "idle") return { state, actions: [] };
      const sequence = BigInt(state.sentThrough);
      return {
        state,
        actions: [{
          type: "send",
          message: { type: "Heartbeat", agent_sequence: sequence, agent_iteration: sequence },
        }],
      };
    }
    case "barrier": {
      if (state.mode === "idle") {
        return {
          state,
          actions: [{ type: "control", message: confirmation(false, event.current) }],
        };
      }
      // Waits for an `idle` step; the executor wakes one at `nextBarrierDeadline`.
      const deadline = event.now + state.limits.barrierTimeoutMs;
      return {
        state: {
          ...state,
          barriers: [...state.barriers, { requested: event.requested, deadline }],
        },
        actions: [],
      };
    }
    case "idle":
      return answerBarriers(state, event.now, event.current, event.queued);
  }
}

/**
 * Whether the channel may send another notification now: fewer than `windowItems`
 * notifications, and fewer than `windowBytes` bytes of them, sent beyond the replica's last
 * `Ack` (PROTOCOL.md §3). So a replica holds at most the window, plus one notification's
 * bytes, that it has not applied, however long the catch-up: its memory stays bounded.
 *
 * No deadlock, because the replica must acknowledge (PROTOCOL.md §3): it acks at least every
 * `ACK_EVERY` (256) notifications it applies and whenever its queue runs empty, and a
 * notification it skips is covered by the next heartbeat's sequence, which it acks the
 * same way. Content answers, barrier answers, heartbeats and write-back results are never
 * held by the window, so what the replica waits on to apply always arrives: every
 * notification counted here is acked in the end, and the window opens again. The windows
 * must be at least 1 notification and 1 byte (an empty window would never open).
 *
 * @param state The channel's state.
 * @returns `true` when a notification may be sent.
 *
 * @example
 * ```ts
 * import { initialChannelState, windowOpen } from "./channel_state.ts";
 * const limits = {
 *   maxQueueItems: 2, maxQueueBytes: 100, barrierTimeoutMs: 1000, windowItems: 2, windowBytes: 800,
 * };
 * const state = { ...initialChannelState(limits), mode: "replay" as const, unacked: 2 };
 * if (windowOpen(state)) throw new Error("two unacknowledged notifications fill the window");
 * ```
 */
export function windowOpen(state: ChannelState): boolean {
  const { windowItems, windowBytes } = state.limits;
  return state.unacked < windowItems && state.unackedBytes < windowBytes;
}

/**
 * When the executor must wake the channel to answer a barrier unsatisfied: the earliest
 * deadline of the pending barriers. One timer armed for it replaces a timer per barrier, so
 * a barrier answered early leaves nothing armed.
 *
 * @param state The channel's state.
 * @returns Epoch ms, or `null` with no barrier pending.
 *
 * @example
 * ```ts
 * import { nextBarrierDeadline } from "./channel_state.ts";
 * const limits = {
 *   maxQueueItems: 2, maxQueueBytes: 100, barrierTimeoutMs: 1000, windowItems: 8, windowBytes: 800,
 * };
 * const state = {
 *   mode: "live" as const, sentThrough: 3, generation: 1, overflows: 0, unacked: 0,
 *   unackedBytes: 0, limits,
 *   barriers: [{ requested: 9, deadline: 2500 }, { requested: 7, deadline: 1500 }],
 * };
 * if (nextBarrierDeadline(state) !== 1500) throw new Error("the earliest deadline");
 * ```
 */
export function nextBarrierDeadline(state: ChannelState): number | null {
  let earliest: number | null = null;
  for (const barrier of state.barriers) {
    if (earliest === null || barrier.deadline < earliest) earliest = barrier.deadline;
  }
  return earliest;
}

function answerBarriers(
  state: ChannelState,
  now: number,
  current: number,
  queued: number,
): ChannelStep {
  if (state.barriers.length === 0) return { state, actions: [] };
  const caughtUp = state.mode === "live" && queued === 0 && state.sentThrough >= current;
  const remaining: PendingBarrier[] = [];
  const actions: ChannelAction[] = [];
  for (const barrier of state.barriers) {
    if (caughtUp && current >= barrier.requested) {
      actions.push({ type: "send", message: confirmation(true, state.sentThrough) });
    } else if (now >= barrier.deadline) {
      actions.push({ type: "send", message: confirmation(false, current) });
    } else {
      remaining.push(barrier);
    }
  }
  if (actions.length === 0) return { state, actions };
  return { state: { ...state, barriers: remaining }, actions };
}

function confirmation(satisfied: boolean, current: number): WireMessage {
  return { type: "BarrierConfirmation", satisfied, current_sequence: BigInt(current) };
}
