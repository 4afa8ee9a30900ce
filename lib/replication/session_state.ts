import type {
  CatchupRequestMessage,
  WireMessage,
  WriteBackEntry,
  WriteBackMessage,
} from "../wire/mod.ts";
import { decideCatchup } from "./catchup_decision.ts";
import { sandboxIdProblem } from "./sandbox_id.ts";

/** Write-back batches of one replica applied or waiting to be answered at once. */
export const WRITEBACKS_OUTSTANDING = 64;

/**
 * What the master knows of one replica connection (PROTOCOL.md §3–§6). The push side
 * (replay, live, barriers) is the channel's: see `channel_state.ts`.
 */
export interface SessionState {
  /**
   * `handshake` until the replica's first `CatchupRequest`, `open` afterwards. An `Ack` is
   * refused during the handshake: it acknowledges what this connection sent, and nothing
   * is sent before the catch-up. (A `WriteBack` is taken, and names the replica.)
   */
  readonly phase: "handshake" | "open";
  /**
   * The replica's identity, once it said it (in a `CatchupRequest` or a `WriteBack`); it
   * may not change on one connection.
   */
  readonly sandboxId: string | null;
  /** The highest sequence it acknowledged on this connection. */
  readonly acked: number;
  /** Write-back batches received and not answered yet. */
  readonly writeBacksOutstanding: number;
}

/** The master's position, read when a catch-up is asked for. */
export interface MasterPosition {
  /** The master's current sequence. */
  current: number;
  /** The oldest sequence it can replay after (0 when the whole history is kept). */
  floor: number;
}

/** What happens on a connection. */
export type SessionEvent =
  /** The replica asks to be brought up to date, the master being at `position`. */
  | { type: "catchup"; message: CatchupRequestMessage; position: MasterPosition }
  /** Any other message from the replica. */
  | { type: "message"; message: Exclude<WireMessage, CatchupRequestMessage> }
  /** A write-back batch was answered (or failed). */
  | { type: "writeBackAnswered" }
  /** The replica said nothing within the handshake timeout. */
  | { type: "silent"; ms: number };

/** What the executor does after a transition. */
export type SessionAction =
  /** Register the replica's identity with the master (replacing an older connection). */
  | { type: "identified"; sandboxId: string }
  /** Replay every path changed after `since`, then go live. */
  | { type: "replay"; since: number }
  /** Tell the replica to reconcile from scratch. */
  | { type: "resync"; reason: string }
  /** Store a cumulative acknowledgement. */
  | { type: "recordAck"; sandboxId: string; sequence: number }
  /** Tell the push channel: an `Ack` up to `sequence` came, which may open its window. */
  | { type: "window"; sequence: number }
  /** Queue a content fetch. */
  | { type: "fetch"; hash: string }
  /** Apply a write-back batch (after the one being applied) and answer it. */
  | { type: "applyWriteBack"; sandboxId: string; entries: WriteBackEntry[] }
  /** Answer a barrier through the push channel. */
  | { type: "barrier"; requested: number }
  /** Close the connection, with the reason logged. */
  | { type: "close"; reason: string };

/** A transition's result. */
export interface SessionStep {
  /** The new state. */
  state: SessionState;
  /** What to do, in order. */
  actions: SessionAction[];
}

/** A connection before its first message. */
export const INITIAL_SESSION_STATE: SessionState = Object.freeze({
  phase: "handshake",
  sandboxId: null,
  acked: 0,
  writeBacksOutstanding: 0,
});

/**
 * The master's side of one replica connection, as transitions. Pure: the caller applies
 * the actions (`MasterSession`).
 *
 * @param state The connection's state.
 * @param event What happened.
 * @returns The new state and the actions to apply; a `close` action ends the connection.
 *
 * @example
 * ```ts
 * import { INITIAL_SESSION_STATE, stepSession } from "./session_state.ts";
 * const { actions } = stepSession(INITIAL_SESSION_STATE, {
 *   type: "message",
 *   message: { type: "Ack", up_to_sequence: 3n },
 * });
 * if (actions[0]?.type !== "close") throw new Error("an Ack before the catch-up is refused");
 * ```
 */
export function stepSession(state: SessionState, event: SessionEvent): SessionStep {
  switch (event.type) {
    case "catchup":
      return catchup(state, event.message, event.position);
    case "message":
      return received(state, event.message);
    case "writeBackAnswered":
      return {
        state: { ...state, writeBacksOutstanding: Math.max(0, state.writeBacksOutstanding - 1) },
        actions: [],
      };
    case "silent":
      return { state, actions: [close(`no message within ${event.ms} ms`)] };
  }
}

function catchup(
  state: SessionState,
  message: CatchupRequestMessage,
  position: MasterPosition,
): SessionStep {
  const identified = identify(state, message.sandbox_id);
  if ("refused" in identified) return { state, actions: [identified.refused] };
  const opened: SessionState = { ...identified.state, phase: "open" };
  const since = message.since_sequence > BigInt(Number.MAX_SAFE_INTEGER)
    ? Infinity
    : Number(message.since_sequence);
  const decision = decideCatchup({ since, current: position.current, floor: position.floor });
  const answer: SessionAction = decision.kind === "resync"
    ? { type: "resync", reason: decision.reason }
    : { type: "replay", since: decision.since };
  return { state: opened, actions: [...identified.actions, answer] };
}

function received(
  state: SessionState,
  message: Exclude<WireMessage, CatchupRequestMessage>,
): SessionStep {
  switch (message.type) {
    case "Ack": {
      if (state.phase !== "open" || state.sandboxId === null) {
        return { state, actions: [close("Ack before CatchupRequest")] };
      }
      const sequence = Number(message.up_to_sequence);
      // Every ack reaches the window, even one not above the connection's highest: after a
      // resync on this connection, the replica acknowledges the new replay from its start.
      const window: SessionAction = { type: "window", sequence };
      if (sequence <= state.acked) return { state, actions: [window] };
      return {
        state: { ...state, acked: sequence },
        actions: [{ type: "recordAck", sandboxId: state.sandboxId, sequence }, window],
      };
    }
    case "ContentFetchRequest":
      return { state, actions: [{ type: "fetch", hash: message.content_hash }] };
    case "WriteBack":
      return writeBack(state, message);
    case "BarrierRequest":
      return { state, actions: [{ type: "barrier", requested: Number(message.sequence) }] };
    default:
      return { state, actions: [close(`unexpected ${message.type} from a replica`)] };
  }
}

function writeBack(state: SessionState, message: WriteBackMessage): SessionStep {
  const identified = identify(state, message.sandbox_id);
  if ("refused" in identified) return { state, actions: [identified.refused] };
  if (identified.state.writeBacksOutstanding >= WRITEBACKS_OUTSTANDING) {
    return {
      state: identified.state,
      actions: [
        ...identified.actions,
        close(`more than ${WRITEBACKS_OUTSTANDING} write-back batches unanswered`),
      ],
    };
  }
  return {
    state: {
      ...identified.state,
      writeBacksOutstanding: identified.state.writeBacksOutstanding + 1,
    },
    actions: [...identified.actions, {
      type: "applyWriteBack",
      sandboxId: message.sandbox_id,
      entries: message.entries,
    }],
  };
}

/** Checks the sandbox id a message carries against the one the connection has, if any. */
function identify(
  state: SessionState,
  sandboxId: string,
): { refused: SessionAction } | { state: SessionState; actions: SessionAction[] } {
  const problem = sandboxIdProblem(sandboxId);
  if (problem) return { refused: close(`invalid sandbox id: ${problem}`) };
  if (state.sandboxId === sandboxId) return { state, actions: [] };
  if (state.sandboxId !== null) {
    return { refused: close(`sandbox id changed from "${state.sandboxId}" to "${sandboxId}"`) };
  }
  return {
    state: { ...state, sandboxId },
    actions: [{ type: "identified", sandboxId }],
  };
}

function close(reason: string): SessionAction {
  return { type: "close", reason };
}
