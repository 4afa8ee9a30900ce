/**
 * The types of the replica's per-connection state machine (`replica_state.ts`): its
 * state, the events it takes and the actions it decides.
 *
 * @module
 */
import type {
  BarrierConfirmationMessage,
  FullResyncRequiredMessage,
  HeartbeatMessage,
  NotificationMessage,
  WireMessage,
} from "../wire/mod.ts";
import type { JournalEntry } from "./write_journal.ts";

/** How a replica treats a rejected write-back (PROTOCOL.md §6). */
export type ReplicaMode = "sandbox" | "local-sync";

/** A path whose write-back was answered, to release: `restore` takes the master's version. */
export interface ReleasedPath {
  /** The path. */
  path: string;
  /** Whether to put the master's applied version back (a conflict in sandbox mode). */
  restore: boolean;
}

/** What the replica's applier takes from its queue, in order. */
export type ApplyItem =
  | NotificationMessage
  | HeartbeatMessage
  | BarrierConfirmationMessage
  | FullResyncRequiredMessage
  | { type: "Release"; paths: ReleasedPath[] }
  | { type: "Catchup" };

/** What a barrier of `ReplicaHandle.syncWait` found (see `replica.ts`). */
export interface BarrierResult {
  /** Always `true`: an unsatisfied barrier resolves to `null`. */
  satisfied: boolean;
  /** The master's sequence at the barrier. */
  masterSequence: number;
  /** The replica's applied sequence then. */
  appliedSequence: number;
}

/**
 * What one replica connection knows (PROTOCOL.md §3–§8): its position, the catch-up or
 * resync under way, the barriers asked, the acknowledgements sent, the releases queued.
 */
export interface ReplicaState {
  /** `sandbox` takes the master's version on a conflict; `local-sync` leaves it to a person. */
  readonly mode: ReplicaMode;
  /** A master silent for longer than this many milliseconds is left. */
  readonly silenceMs: number;
  /** The data folder's name when it lies inside the workspace (its paths are refused). */
  readonly dataDirInside: string | undefined;
  /** The highest master sequence applied here. */
  readonly applied: number;
  /** The master's sequence as last heard. */
  readonly masterSequence: number;
  /** A reconciliation from scratch in progress, with the sequence it must reach once known. */
  readonly resync: { readonly target: number | null } | null;
  /**
   * The highest sequence a resync's replay has applied (or a heartbeat certified) on this
   * connection: acknowledged while the position itself waits for the sweep.
   */
  readonly resyncApplied: number;
  /** The sequence the catch-up asked to start after (0 for a resync). */
  readonly since: number;
  /** Whether the `CatchupRequest` was sent (acks wait for it: the master refuses them before). */
  readonly catchupSent: boolean;
  /** The master's sequence when this connection began (from the probe): in sync once reached. */
  readonly catchupTarget: number | null;
  /** Whether the connection reached the master's sequence of its start. */
  readonly reachedLive: boolean;
  /** The highest sequence of the notifications received on this connection. */
  readonly highestReceived: number;
  /**
   * Whether the watcher is paused for a large change arriving live (a burst, see
   * `LARGE_CATCHUP`): resumed once a heartbeat or barrier certifies all that was received.
   */
  readonly burstPaused: boolean;
  /** Whether a heartbeat behind what was applied already made it ask to catch up again. */
  readonly askedForResync: boolean;
  /** Barriers sent and not answered, oldest first: the master answers them in order. */
  readonly barriers: readonly { readonly id: number; readonly purpose: "probe" | "wait" }[];
  /** The sequence last acknowledged (a resync's replay acknowledges from its start again). */
  readonly lastAcked: number;
  /** Notifications applied since the last acknowledgement. */
  readonly sinceAck: number;
  /** Whether an `Ack` is being sent (one at a time). */
  readonly ackInFlight: boolean;
  /** Whether a newer position is to be sent once the `Ack` in flight is out. */
  readonly ackAgain: boolean;
  /**
   * Paths answered by the master whose `Release` is queued and not run yet, with how many
   * such releases each: until it runs, a path still holds what the replica wrote (a file
   * where the master now has a folder), so master versions of it and inside it wait too.
   */
  readonly releasing: ReadonlyMap<string, number>;
  /** When the master was last heard from (or when silence did not count). */
  readonly lastHeardAt: number;
  /** Whether the connection is being left because the master was silent too long. */
  readonly leftSilent: boolean;
}

/** What happens to a replica connection: a message, or a fact of the replica's own. */
export type ReplicaEvent =
  /** A message from the master, read at `now`. */
  | { type: "message"; message: WireMessage; now: number }
  /** Reading is paused for back-pressure at `now`: the silence is ours. */
  | { type: "paused"; now: number }
  /** The watchdog looks at `now`, with `fetching` content fetches unanswered. */
  | { type: "tick"; now: number; fetching: number }
  /** Time to ask the master to catch this replica up (the start, or after carried ones). */
  | { type: "catchup" }
  /** A heartbeat's turn in the queue. */
  | { type: "heartbeat"; sequence: number }
  /** A barrier confirmation's turn in the queue. */
  | { type: "confirmation"; current: number; satisfied: boolean }
  /** A `FullResyncRequired`'s turn in the queue. */
  | { type: "resyncRequired"; current: number; reason: string }
  /** The resync's sweep of paths the master no longer has is done (`removed` of them). */
  | { type: "resyncSwept"; sequence: number; removed: number }
  /** `syncWait` asks for barrier `id`. */
  | { type: "barrier"; id: number }
  /** Notifications up to `last` were applied (`count` of them), in order. */
  | { type: "applied"; last: number; count: number }
  /** A batch was cut short by the connection's end: everything up to `applied` is applied. */
  | { type: "cut"; applied: number }
  /** An item was handled, `queued` are left: time to acknowledge, maybe. */
  | { type: "handled"; queued: number }
  /** The `Ack` in flight is out (or failed). */
  | { type: "ackSent" }
  /** The master answered these write-back entries. */
  | { type: "answered"; entries: JournalEntry[] }
  /** A queued release's turn. */
  | { type: "release"; paths: ReleasedPath[] };

/** What the executor does after a transition, in order. */
export type ReplicaAction =
  /** Queue an item for the applier. */
  | { type: "enqueue"; item: ApplyItem }
  /** Start fetching the content a notification will need, so fetches overlap. */
  | { type: "prefetch"; message: NotificationMessage }
  /** Hand a content answer to the fetcher, or a write-back answer to the write-back loop. */
  | { type: "answer"; message: WireMessage }
  /** Forget the master sequences of write-backs accepted on this connection. */
  | { type: "forgetAccepted" }
  /** List a path that could not be applied. */
  | { type: "problem"; path: string; reason: string }
  /** Send a probe barrier and the `CatchupRequest` after `since`, together. */
  | { type: "requestCatchup"; since: number }
  /** Send a `CatchupRequest` after `since` (a resync, or a master behind us). */
  | { type: "askCatchup"; since: number }
  /** Send a `BarrierRequest`, not waiting for it. */
  | { type: "sendBarrier" }
  /** Store the applied position (durable before acknowledged). */
  | { type: "saveApplied" }
  /** Send an `Ack` up to `sequence`, not waiting for it, then report `ackSent`. */
  | { type: "sendAck"; sequence: number }
  /** Settle `syncWait`'s barrier `id`. */
  | { type: "resolveBarrier"; id: number; result: BarrierResult | null }
  /**
   * Pause the workspace's watcher while many master versions are applied: a large
   * catch-up, or a large change arriving live (a burst).
   */
  | { type: "pauseWatching"; burst?: true }
  /** Resume the workspace's watcher. */
  | { type: "resumeWatching" }
  /** Show progress of a large catch-up. */
  | { type: "startProgress"; label: string; from: number; to: number }
  /** End the progress shown. */
  | { type: "finishProgress" }
  /** Log that the replica is in sync, and forget apply notes of versions applied since. */
  | { type: "inSync"; sequence: number }
  /** Store that a resync is pending and start remembering the paths it mentions. */
  | { type: "startResync"; target: number; reason: string }
  /** Remove what the master no longer has (the resync reached `sequence`), then report `resyncSwept`. */
  | { type: "sweepResync"; sequence: number }
  /** Store that the resync is done at `sequence`, and forget apply notes applied since. */
  | { type: "resyncDone"; sequence: number; removed: number }
  /**
   * Record that the master accepted the write-back of `path` at `masterSeq`; `removed`
   * when `path` is an accepted rename's source, which the master removed (at a sequence
   * before `masterSeq`, whose notification is then superseded and skipped). Refusals of
   * earlier changes of `path` (before `localSeq`) left for a person are settled by it.
   */
  | { type: "accepted"; path: string; masterSeq: number; localSeq: number; removed?: true }
  /** Record a rejected write-back; `keep: "upstream"` when the master's version is taken. */
  | {
    type: "rejected";
    entry: JournalEntry;
    reason: string;
    conflict: boolean;
    keep: "upstream" | null;
  }
  /** Apply what was held back behind these answered paths (their `release` turn). */
  | { type: "releaseAll"; paths: ReleasedPath[] }
  /** Close the connection with this reason. */
  | { type: "close"; reason: string };

/** A transition's result. */
export interface ReplicaStep {
  /** The new state. */
  state: ReplicaState;
  /** What to do, in order. */
  actions: ReplicaAction[];
}
