import { type Clock, SYSTEM_CLOCK } from "../concurrency/mod.ts";
import type { Iteration } from "../store/mod.ts";
import { encodeFrame, type WireMessage } from "../wire/mod.ts";
import { orderedMap } from "./_ordered_map.ts";
import { Unacked } from "./_unacked.ts";
import {
  type ChannelEvent,
  type ChannelMode,
  type ChannelState,
  initialChannelState,
  nextBarrierDeadline,
  stepChannel,
  windowOpen,
} from "./channel_state.ts";
import type { Transport } from "./transports/mod.ts";

/** One master iteration, ready for every replica: its encoded notification, or `null` when filtered. */
export interface PushItem {
  /** The iteration's master sequence. */
  sequence: number;
  /** The encoded `Notification` frame, shared by all channels; `null` for a filtered path. */
  frame: Uint8Array | null;
}

/** What a channel reads from the master's store to replay. */
export interface ReplaySource {
  /** The latest iteration of each path changed after `sequence`, ascending. */
  latestSince(sequence: number): Iteration[];
  /** The master's current sequence. */
  sequence(): number;
  /** The encoded notification for an iteration, `null` when its path is filtered. */
  frame(iteration: Iteration): Promise<Uint8Array | null>;
}

/** Options for {@linkcode PushChannel}. */
export interface PushChannelOptions {
  /** The replica's connection. */
  transport: Transport;
  /** The master's store, seen through what replay needs. */
  source: ReplaySource;
  /** Milliseconds between heartbeats. @default {1000} */
  heartbeatMs?: number | undefined;
  /** Queued notifications beyond which the queue is dropped and replay repairs. @default {10000} */
  maxQueueItems?: number | undefined;
  /** Queued bytes beyond which the queue is dropped and replay repairs. @default {33554432} */
  maxQueueBytes?: number | undefined;
  /** Milliseconds a barrier waits for an unreached sequence. @default {30000} */
  barrierTimeoutMs?: number | undefined;
  /**
   * Notifications sent beyond the replica's last `Ack` before sending waits for one (at
   * least 1). @default {WINDOW_ITEMS}
   */
  windowItems?: number | undefined;
  /**
   * Notification bytes sent beyond the replica's last `Ack` before sending waits for one
   * (at least 1). @default {WINDOW_BYTES}
   */
  windowBytes?: number | undefined;
  /** Called when the queue overflowed and was dropped. */
  onOverflow?: (dropped: number) => void;
  /**
   * The time and timers heartbeats and barrier deadlines run on (a test advances its own).
   * @default {SYSTEM_CLOCK}
   */
  clock?: Clock | undefined;
}

export type { ChannelMode } from "./channel_state.ts";

/**
 * Notifications a replica is sent beyond its last `Ack` (PROTOCOL.md §3). A replica applies
 * up to 2,048 at once (`APPLY_BATCH`) and acknowledges after each batch: twice that lets the
 * master send the next batch while the replica applies one, so a catch-up streams; what the
 * replica has received and not applied stays a few MiB.
 */
export const WINDOW_ITEMS = 4096;
/** Notification bytes (inline content included) a replica is sent beyond its last `Ack`. */
export const WINDOW_BYTES = 16 * 1024 * 1024;

/** Bytes handed to the transport before the sender waits for them to be written. */
const IN_FLIGHT_BYTES = 1024 * 1024;
/** Notifications built at once during replay (their inline content read from the CAS). */
const REPLAY_CONCURRENCY = 16;

/**
 * The push side of one replica's connection.
 *
 * Every message leaves in order through one sender loop, and the channel keeps
 * `sentThrough`: every notification up to that sequence that this replica should get has
 * been handed to the transport. A `Heartbeat` carries `sentThrough`, so a replica that
 * applied everything before it holds the master's state at that sequence; a
 * `BarrierConfirmation` is sent only once `sentThrough` has reached the master's
 * sequence, so it certifies the same.
 *
 * Modes: `idle` until the replica says where it is; `replay` sends the latest iteration
 * of every path changed after `sentThrough` straight from the store; `live` forwards new
 * iterations from a bounded queue. When the queue overflows (a slow replica) it is dropped
 * and the channel falls back to replay, so memory stays bounded and nothing is lost. Those
 * transitions and the barriers' answers are decided by the pure {@linkcode stepChannel};
 * this class holds the queue and the connection and applies what it decides.
 *
 * The window ({@linkcode windowOpen}, acks told by {@linkcode PushChannel.acked}): while
 * it is full, replay and live wait (the page where it stopped, the live queue in its
 * bounds); control messages, heartbeats and barrier answers still go. A notification held
 * back is not handed: `sentThrough`, so heartbeats and barriers, do not count it.
 *
 * Time comes only from the injected {@linkcode Clock}: the heartbeat timer (armed at the
 * first catch-up), barrier deadlines and their timers. {@linkcode PushChannel.run} loops
 * over {@linkcode PushChannel.step} and sleeps when there is nothing to do; a test drives
 * the same transitions by calling `step()` itself and advancing a manual clock.
 *
 * @example Stepped by hand
 * ```ts ignore
 * const channel = new PushChannel({ transport, source, clock: manualClock, heartbeatMs: 1000 });
 * channel.startReplay(0);
 * while (await channel.step()) {} // the replay, then the heartbeat saying it is caught up
 * manualClock.advance(1000); // the heartbeat timer fires
 * await channel.step(); // sends the heartbeat
 * ```
 */
export class PushChannel {
  readonly #transport: Transport;
  readonly #source: ReplaySource;
  readonly #heartbeatMs: number;
  readonly #onOverflow: (dropped: number) => void;
  readonly #clock: Clock;
  #state: ChannelState;
  #queue: PushItem[] = [];
  #queueHead = 0;
  #queueBytes = 0;
  #control: WireMessage[] = [];
  /** The one timer waking the sender at the earliest barrier deadline, and that deadline. */
  #barrierTimer: unknown;
  #barrierTimerAt: number | null = null;
  #heartbeatDue = false;
  #closed = false;
  /** Whether `run()` is looping: then only it steps. */
  #running = false;
  #wake: (() => void) | null = null;
  /** The heartbeat timer's handle, once armed (at the first catch-up). */
  #heartbeatTimer: unknown;
  #inFlight: Promise<void>[] = [];
  #inFlightBytes = 0;
  readonly #unacked = new Unacked();
  /** The replay page being sent, resumed where the window stopped it. */
  #page: { generation: number; frames: AsyncGenerator<PushItem> } | null = null;

  /** @param options See {@linkcode PushChannelOptions}. */
  constructor(options: PushChannelOptions) {
    this.#transport = options.transport;
    this.#source = options.source;
    this.#heartbeatMs = options.heartbeatMs ?? 1000;
    this.#state = initialChannelState({
      maxQueueItems: options.maxQueueItems ?? 10_000,
      maxQueueBytes: options.maxQueueBytes ?? 32 * 1024 * 1024,
      barrierTimeoutMs: options.barrierTimeoutMs ?? 30_000,
      windowItems: Math.max(1, options.windowItems ?? WINDOW_ITEMS),
      windowBytes: Math.max(1, options.windowBytes ?? WINDOW_BYTES),
    });
    this.#onOverflow = options.onOverflow ?? (() => {});
    this.#clock = options.clock ?? SYSTEM_CLOCK;
  }

  /** The sending mode. */
  get mode(): ChannelMode {
    return this.#state.mode;
  }

  /** Notifications waiting in the live queue. */
  get queued(): number {
    return this.#queue.length - this.#queueHead;
  }

  /** How many times the queue overflowed and was dropped. */
  get overflows(): number {
    return this.#state.overflows;
  }

  /** Notifications sent on this catch-up and not acknowledged yet. */
  get unacked(): number {
    return this.#state.unacked;
  }

  /**
   * Takes the replica's cumulative `Ack`: every notification sent up to `sequence` leaves
   * the window, which may let the sender go on.
   *
   * @param sequence The acknowledged sequence (any: an ack of what was not sent only
   * empties the window, and an old one releases nothing more).
   */
  acked(sequence: number): void {
    if (this.#closed) return;
    const { released, releasedBytes } = this.#unacked.release(sequence);
    if (released > 0) this.#apply({ type: "acked", released, releasedBytes });
  }

  /**
   * Offers a new master iteration, in sequence order. Kept only in live mode; replay
   * reads the store and covers it.
   */
  offer(item: PushItem): void {
    if (this.#closed) return;
    const bytes = item.frame?.length ?? 0;
    this.#apply({ type: "offer", bytes, queued: this.queued, queuedBytes: this.#queueBytes }, item);
  }

  /** Answers a catch-up: replay every path changed after `since`, then go live. */
  startReplay(since: number): void {
    if (this.#closed) return;
    // Heartbeats certify what was sent, so they start with the first replay (idle sends none).
    if (this.#heartbeatTimer === undefined) this.#armHeartbeat();
    this.#apply({ type: "catchup", since });
  }

  /** Tells the replica to reconcile from scratch (`FullResyncRequired`) and waits for its next catch-up. */
  requireResync(reason: string): void {
    this.#apply({ type: "resync", reason, current: this.#source.sequence() });
  }

  /**
   * Answers a `BarrierRequest` (PROTOCOL.md §5): once the master has reached `requested`
   * and this replica has been sent everything up to the master's sequence, with
   * `satisfied: true`; after the barrier timeout with `satisfied: false`. While the
   * channel is idle (before the replica's catch-up request) nothing can be certified: the
   * answer is immediate, `satisfied: false`, with the master's current sequence.
   */
  barrier(requested: number): void {
    this.#apply({
      type: "barrier",
      requested,
      now: this.#clock.now(),
      current: this.#source.sequence(),
    });
  }

  /** Stops the sender loop; the transport is left to its owner. */
  close(): void {
    this.#closed = true;
    this.#stopTimers();
    this.#dropPage();
    this.#notify();
  }

  /**
   * Runs the sender loop until {@linkcode PushChannel.close} or a failed send: steps while
   * there is work, and otherwise waits to be woken (an offer, a catch-up, a timer).
   *
   * @throws {TransportClosedError} When the connection closes under it.
   */
  async run(): Promise<void> {
    if (this.#running) throw new Error("The push channel is already running");
    this.#running = true;
    try {
      while (!this.#closed) {
        if (await this.#step()) continue;
        await this.#flush();
        if (this.#closed || this.#hasWork()) continue;
        await new Promise<void>((resolve) => this.#wake = resolve);
      }
    } finally {
      this.#running = false;
      this.#closed = true;
      this.#stopTimers();
      this.#dropPage();
    }
  }

  /**
   * Does one unit of the sender's work, as {@linkcode PushChannel.run} does in its loop,
   * and waits until what it sent is written: a control message, a due heartbeat, a replay
   * page (as far as the window lets it), one live notification, or the barriers that can
   * be answered now (by the clock's time). For a test that drives the channel itself,
   * without `run()`.
   *
   * @returns `false` when there was nothing to do.
   * @throws {Error} While `run()` is looping (only it steps then).
   * @throws {TransportClosedError} When the connection closes under it.
   */
  async step(): Promise<boolean> {
    if (this.#running) throw new Error("The push channel is running: step() is for a stopped one");
    if (this.#closed) return false;
    const worked = await this.#step();
    await this.#flush();
    return worked;
  }

  /**
   * Runs one transition and applies its actions. Messages to send now are returned for the
   * sender loop, the only place that writes to the transport.
   *
   * @param event What happened.
   * @param offered The item an `offer` event is about.
   */
  #apply(event: ChannelEvent, offered?: PushItem): WireMessage[] {
    const { state, actions } = stepChannel(this.#state, event);
    this.#state = state;
    const sends: WireMessage[] = [];
    for (const action of actions) {
      switch (action.type) {
        case "control":
          this.#control.push(action.message);
          break;
        case "send":
          sends.push(action.message);
          break;
        case "enqueue":
          this.#queue.push(offered!);
          this.#queueBytes += offered!.frame?.length ?? 0;
          break;
        case "dropQueue":
          this.#clearQueue();
          break;
        case "forgetUnacked":
          this.#unacked.clear();
          break;
        case "overflowed":
          this.#onOverflow(action.dropped);
          break;
        case "heartbeatSoon":
          this.#heartbeatDue = true;
          break;
      }
    }
    this.#syncBarrierTimer();
    this.#notify();
    return sends;
  }

  /** Does one unit of work; `false` when there was none. */
  async #step(): Promise<boolean> {
    if (this.#control.length > 0) {
      await this.#send(encodeFrame(this.#control.shift()!));
      return true;
    }
    if (this.#heartbeatDue) {
      this.#heartbeatDue = false;
      for (const message of this.#apply({ type: "heartbeat" })) {
        await this.#send(encodeFrame(message));
      }
      return true;
    }
    const mode = this.#state.mode;
    // A closed window holds notifications only: barriers are still answered below.
    const open = windowOpen(this.#state);
    if (mode === "replay" && open) {
      await this.#replay();
      return true;
    }
    if (mode === "live" && this.queued > 0 && open) {
      const item = this.#queue[this.#queueHead]!;
      this.#queue[this.#queueHead++] = EMPTY_ITEM;
      this.#queueBytes -= item.frame?.length ?? 0;
      if (this.#queueHead === this.#queue.length) this.#clearQueue();
      if (item.sequence > this.#state.sentThrough) {
        if (item.frame) await this.#send(item.frame);
        this.#sent(item);
      }
      return true;
    }
    // Only barriers wait on an idle sender: without any, skip reading the master's sequence
    // (a query) every time the loop runs dry.
    if (this.#state.barriers.length === 0) return false;
    const answers = this.#apply({
      type: "idle",
      now: this.#clock.now(),
      current: this.#source.sequence(),
      queued: this.queued,
    });
    for (const answer of answers) await this.#send(encodeFrame(answer));
    return answers.length > 0;
  }

  /**
   * Sends the store's latest version of every path changed after `sentThrough`, a page at
   * a time, as far as the window lets it; once a page finds nothing, goes live. Returns at
   * a closed window, a due heartbeat or control message (they go first), or the page's end;
   * the next call resumes there.
   */
  async #replay(): Promise<void> {
    const generation = this.#state.generation;
    let page = this.#page;
    if (page?.generation !== generation) {
      this.#dropPage();
      const iterations = this.#source.latestSince(this.#state.sentThrough);
      if (iterations.length === 0) {
        // Synchronous with the empty answer: every iteration recorded from now on is offered live.
        this.#apply({ type: "replayed" });
        return;
      }
      const frames = orderedMap(iterations, REPLAY_CONCURRENCY, async (iteration) => ({
        sequence: iteration.sequence,
        frame: await this.#source.frame(iteration),
      }));
      page = this.#page = { generation, frames };
    }
    while (windowOpen(this.#state)) {
      const next = await page.frames.next();
      // A catch-up or resync meanwhile starts over from its own position.
      if (this.#closed || generation !== this.#state.generation) return;
      if (next.done) {
        this.#page = null;
        return;
      }
      const item = next.value;
      if (item.frame) await this.#send(item.frame);
      if (generation !== this.#state.generation) return;
      this.#sent(item);
      if (this.#heartbeatDue || this.#control.length > 0) return;
    }
  }

  /** Records an item handed to the transport (a filtered one only moves the position). */
  #sent(item: PushItem): void {
    const bytes = item.frame?.length ?? 0;
    if (bytes > 0) this.#unacked.push(item.sequence, bytes);
    this.#apply({ type: "sent", sequence: item.sequence, bytes });
  }

  #dropPage(): void {
    // Its frames built ahead are dropped with it (a failed build is not thrown then).
    this.#page?.frames.return(undefined).catch(() => {});
    this.#page = null;
  }

  /** Arms the heartbeat timer; each firing marks a heartbeat due and arms the next. */
  #armHeartbeat(): void {
    this.#heartbeatTimer = this.#clock.set(() => {
      if (this.#closed) return;
      this.#heartbeatDue = true;
      this.#armHeartbeat();
      this.#notify();
    }, this.#heartbeatMs);
  }

  /** Arms the barrier timer for the earliest pending deadline, or disarms it with none. */
  #syncBarrierTimer(): void {
    const at = this.#closed ? null : nextBarrierDeadline(this.#state);
    if (at === this.#barrierTimerAt) {
      // Still armed for it; or it fired and the deadline has passed: the sender's next idle
      // step answers the barrier. Only a timer that fired early is armed again.
      if (at === null || this.#barrierTimer !== undefined || at < this.#clock.now()) return;
    }
    this.#clock.clear(this.#barrierTimer);
    this.#barrierTimer = undefined;
    this.#barrierTimerAt = at;
    if (at === null) return;
    // A millisecond past the deadline: the barrier is answered once `now >= deadline`.
    const ms = Math.max(0, at - this.#clock.now()) + 1;
    this.#barrierTimer = this.#clock.set(() => {
      this.#barrierTimer = undefined;
      this.#notify();
    }, ms);
  }

  #stopTimers(): void {
    this.#clock.clear(this.#heartbeatTimer);
    this.#clock.clear(this.#barrierTimer);
    this.#barrierTimer = undefined;
    this.#barrierTimerAt = null;
  }

  #hasWork(): boolean {
    const mode = this.#state.mode;
    if (this.#control.length > 0 || this.#heartbeatDue) return true;
    // Held by the window: an ack wakes the sender (see `acked`).
    return windowOpen(this.#state) && (mode === "replay" || (mode === "live" && this.queued > 0));
  }

  /** Hands a frame to the transport, waiting only once enough bytes are in flight. */
  async #send(frame: Uint8Array): Promise<void> {
    const sent = this.#transport.send(frame);
    sent.catch(() => {}); // a channel closed before flushing never awaits it
    this.#inFlight.push(sent);
    this.#inFlightBytes += frame.length;
    if (this.#inFlightBytes >= IN_FLIGHT_BYTES) await this.#flush();
  }

  async #flush(): Promise<void> {
    if (this.#inFlight.length === 0) return;
    const pending = this.#inFlight;
    this.#inFlight = [];
    this.#inFlightBytes = 0;
    await Promise.all(pending);
  }

  #clearQueue(): void {
    this.#queue = [];
    this.#queueHead = 0;
    this.#queueBytes = 0;
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }
}

const EMPTY_ITEM: PushItem = { sequence: 0, frame: null };
