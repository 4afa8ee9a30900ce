import { type Clock, SYSTEM_CLOCK } from "../concurrency/mod.ts";
import { errorMessage, log } from "../log/mod.ts";
import type { WireMessage, WriteBackEntry } from "../wire/mod.ts";
import type { FetchClient } from "./fetch_scheduler.ts";
import { PushChannel, type ReplaySource } from "./push_channel.ts";
import {
  INITIAL_SESSION_STATE,
  type MasterPosition,
  type SessionAction,
  type SessionEvent,
  type SessionState,
  stepSession,
} from "./session_state.ts";
import type { Transport } from "./transports/mod.ts";
import type { WriteBackBatchResult } from "./writeback_outcomes.ts";

/** Where a session's content fetches wait their turn (the master's `FetchScheduler`). */
export interface FetchQueue {
  /** Queues a fetch of `hash` for `client`; never waits for the answer. */
  request(client: FetchClient, hash: string): void;
  /** Forgets every fetch of `client`. */
  drop(client: FetchClient): void;
}

/**
 * What a session needs from the master, given to it: the session never reaches into the
 * master, and the master reads a session only through its public members.
 */
export interface MasterSessionOptions {
  /** The replica's connection. */
  transport: Transport;
  /** The master's store, seen through what replay needs. */
  replay: ReplaySource;
  /** Where content fetches are queued. */
  fetches: FetchQueue;
  /** The master's sequence and history floor, read when a catch-up is asked for. */
  position(): MasterPosition;
  /** Registers the replica's identity (closing an older connection of the same id). */
  identified(session: MasterSession, sandboxId: string): void;
  /** Stores a cumulative acknowledgement. */
  recordAck(sandboxId: string, sequence: number): void;
  /** Decides and applies a write-back batch. */
  applyWriteBack(sandboxId: string, entries: WriteBackEntry[]): Promise<WriteBackBatchResult>;
  /** Milliseconds between heartbeats. @default {1000} */
  heartbeatMs?: number | undefined;
  /** Milliseconds the replica has to send its first message. @default {10000} */
  handshakeTimeoutMs?: number | undefined;
  /** Per-replica queue bound in notifications. @default {10000} */
  maxQueueItems?: number | undefined;
  /** Per-replica queue bound in bytes. @default {33554432} */
  maxQueueBytes?: number | undefined;
  /** Milliseconds a barrier waits for a sequence the master has not reached. @default {30000} */
  barrierTimeoutMs?: number | undefined;
  /** Notifications sent beyond the replica's last `Ack`. @default {WINDOW_ITEMS} */
  windowItems?: number | undefined;
  /** Notification bytes sent beyond the replica's last `Ack`. @default {WINDOW_BYTES} */
  windowBytes?: number | undefined;
  /**
   * The time and timers of the handshake timeout and the push channel (a test advances its
   * own). @default {SYSTEM_CLOCK}
   */
  clock?: Clock | undefined;
}

/**
 * One replica connection on the master: reads its messages, runs each through the pure
 * {@linkcode stepSession} and applies the actions; pushes through its {@linkcode PushChannel}.
 *
 * {@linkcode MasterSession.run} is the driver: it feeds every message read to
 * {@linkcode MasterSession.receive} and arms the handshake timeout on the injected clock.
 * A test may call `receive()` itself, and step the channel, without running the loops.
 */
export class MasterSession {
  /** The replica's connection. */
  readonly transport: Transport;
  /** The push side of the connection. */
  readonly channel: PushChannel;
  readonly #options: MasterSessionOptions;
  readonly #fetchClient: FetchClient;
  readonly #clock: Clock;
  #state: SessionState = INITIAL_SESSION_STATE;
  #closeReason: string | null = null;
  /** The write-back batch being applied: the next waits for it (not for its answer's send). */
  #applying: Promise<void> = Promise.resolve();
  /** Answers to write-backs, sent in order without holding up reading. */
  #answering: Promise<void> = Promise.resolve();

  /**
   * Creates the session of one accepted connection; nothing is read or sent before
   * {@linkcode MasterSession.run}.
   *
   * @param options See {@linkcode MasterSessionOptions}.
   */
  constructor(options: MasterSessionOptions) {
    const transport = options.transport;
    this.transport = transport;
    this.#options = options;
    this.#clock = options.clock ?? SYSTEM_CLOCK;
    this.#fetchClient = {
      maxPayload: transport.maxPayload,
      // Ahead of queued notifications: the replica waits on it to apply them.
      send: (answer) => transport.send(answer, { ahead: true }),
      close: (reason) => this.close(reason),
    };
    this.channel = new PushChannel({
      transport,
      source: options.replay,
      heartbeatMs: options.heartbeatMs,
      maxQueueItems: options.maxQueueItems,
      maxQueueBytes: options.maxQueueBytes,
      barrierTimeoutMs: options.barrierTimeoutMs,
      windowItems: options.windowItems,
      windowBytes: options.windowBytes,
      clock: this.#clock,
      onOverflow: (dropped) =>
        log("warn", "replica too slow: queue dropped, replaying from the store", {
          sandbox_id: this.sandboxId,
          dropped,
        }),
    });
  }

  /** The replica's identity, once it said it. */
  get sandboxId(): string | null {
    return this.#state.sandboxId;
  }

  /** The highest sequence it acknowledged on this connection. */
  get acked(): number {
    return this.#state.acked;
  }

  /**
   * Serves the connection until it ends: its messages are read and its pushes sent.
   *
   * @returns When the connection is closed and the work it started is done.
   */
  async run(): Promise<void> {
    const sending = this.channel.run().catch((error) => {
      if (!this.#closeReason) this.#closeReason = `send failed: ${errorMessage(error)}`;
    }).finally(() => this.transport.close());
    // A connection that says nothing (a half-open flood) gives its slot back soon.
    const handshakeMs = this.#options.handshakeTimeoutMs ?? 10_000;
    let handshake: unknown = this.#clock.set(
      () => void this.#dispatch({ type: "silent", ms: handshakeMs }),
      handshakeMs,
    );
    try {
      for await (const msg of this.transport.messages()) {
        this.#clock.clear(handshake);
        handshake = undefined;
        if (await this.receive(msg)) break;
      }
    } catch (error) {
      this.#closeReason ??= `protocol error: ${errorMessage(error)}`;
    } finally {
      this.#clock.clear(handshake);
      this.channel.close();
      this.transport.close();
      this.#options.fetches.drop(this.#fetchClient);
      await sending;
      await this.#applying;
      await this.#answering;
      const fields = { remote: this.transport.remote, sandbox_id: this.sandboxId };
      if (this.#closeReason) {
        log("warn", "replica disconnected", { ...fields, reason: this.#closeReason });
      } else log("info", "replica disconnected", fields);
    }
  }

  /**
   * Closes the connection; the first reason given is the one logged.
   *
   * @param reason Why, for the log.
   */
  close(reason: string): void {
    this.#closeReason ??= reason;
    this.channel.close();
    this.transport.close();
  }

  /**
   * Runs one message from the replica through the session's state machine and applies what
   * it decides. A write-back batch starts once the one before it is applied; its answer is
   * sent behind, without holding this up.
   *
   * @param msg The message, as read from the connection.
   * @returns `true` when the session decided to close the connection.
   */
  receive(msg: WireMessage): Promise<boolean> {
    const event: SessionEvent = msg.type === "CatchupRequest"
      ? { type: "catchup", message: msg, position: this.#options.position() }
      : { type: "message", message: msg };
    return this.#dispatch(event);
  }

  /** Runs one transition and applies its actions; `true` when the connection is to close. */
  async #dispatch(event: SessionEvent): Promise<boolean> {
    const { state, actions } = stepSession(this.#state, event);
    this.#state = state;
    for (const action of actions) {
      if (await this.#perform(action)) return true;
    }
    return false;
  }

  async #perform(action: SessionAction): Promise<boolean> {
    switch (action.type) {
      case "identified":
        this.#options.identified(this, action.sandboxId);
        log("info", "replica identified", {
          remote: this.transport.remote,
          sandbox_id: action.sandboxId,
        });
        return false;
      case "replay":
        this.channel.startReplay(action.since);
        return false;
      case "resync":
        log("info", "replica must resync", { sandbox_id: this.sandboxId, reason: action.reason });
        this.channel.requireResync(action.reason);
        return false;
      case "recordAck":
        this.#options.recordAck(action.sandboxId, action.sequence);
        return false;
      case "window":
        this.channel.acked(action.sequence);
        return false;
      case "fetch":
        // Queued, never awaited: reading goes on while answers wait their turn.
        this.#options.fetches.request(this.#fetchClient, action.hash);
        return false;
      case "applyWriteBack":
        await this.#applyWriteBack(action.sandboxId, action.entries);
        return false;
      case "barrier":
        this.channel.barrier(action.requested);
        return false;
      case "close":
        this.close(action.reason);
        return true;
    }
  }

  async #applyWriteBack(sandboxId: string, entries: WriteBackEntry[]): Promise<void> {
    // One batch applied at a time; reading waits for the disk, never for the network:
    // a replica that cannot take our answers right now must still be read (acks,
    // heartbeats, its next write-backs), or a relay blocking on writes deadlocks both.
    await this.#applying;
    const applied = this.#options.applyWriteBack(sandboxId, entries);
    this.#applying = applied.then(() => {}, () => {});
    this.#answering = this.#answering.then(async () => {
      const result = await applied;
      await this.transport.send({
        type: "WriteBackResult",
        accepted: result.accepted,
        rejected: result.rejected,
      });
      if (result.disconnect) this.close(`hostile write-back: ${result.disconnect}`);
    }).catch((error) => this.close(`write-back failed: ${errorMessage(error)}`))
      .finally(() => this.#dispatch({ type: "writeBackAnswered" }));
  }
}
