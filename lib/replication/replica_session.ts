import { errorMessage, log } from "../log/mod.ts";
import { type Clock, SYSTEM_CLOCK } from "../concurrency/mod.ts";
import type { NotificationMessage, WireMessage } from "../wire/mod.ts";
import { unsettledRetryDelay } from "./apply_decision.ts";
import { carriedNotifications, splitCutBatch } from "./carry_decision.ts";
import { ContentFetcher } from "./content_fetcher.ts";
import { followingNotifications } from "./apply_batch.ts";
import { VersionApplier } from "./replica_apply.ts";
import type { ReplicaCore } from "./replica_core.ts";
import { ReplicaExecutor } from "./replica_executor.ts";
import { ResyncSweep } from "./replica_resync.ts";
import {
  type ApplyItem,
  type BarrierResult,
  baseSilenceMs,
  initialReplicaState,
  type ReplicaAction,
  type ReplicaEvent,
  type ReplicaState,
  stepReplica,
} from "./replica_state.ts";
import { AsyncQueue } from "./transports/_async_queue.ts";
import type { Transport } from "./transports/mod.ts";
import { WritebackLoop } from "./writeback_loop.ts";

/**
 * Items queued for the applier, and inline-content bytes, beyond which reading from the
 * master pauses. The master sends at most its window beyond our last `Ack` (4,096
 * notifications, 16 MiB; PROTOCOL.md §3), and we acknowledge at least every `ACK_EVERY`
 * applied and whenever the queue runs empty: with a master keeping the window the queue
 * stays below these, and reading never pauses. They are for a master that does not (an
 * older one, a hostile one), and for heartbeats piling up behind a stalled applier.
 */
const MAX_QUEUED = 8192;
const MAX_QUEUED_BYTES = 32 * 1024 * 1024;
/**
 * Past these the connection ends. Reading cannot pause while the applier waits for a
 * content answer (it comes on the same stream), so a master ignoring the window could
 * grow the queue without end then: this bounds it. What was applied stays, the first
 * `MAX_CARRIED` of the rest are carried to the next connection, which goes on from there.
 */
const HARD_MAX_QUEUED = 4 * MAX_QUEUED;
const HARD_MAX_QUEUED_BYTES = 4 * MAX_QUEUED_BYTES;
/**
 * Most notifications kept from a connection that ended before they were applied (see
 * `ReplicaCore.carried`); the rest are sent again by the next catch-up.
 */
const MAX_CARRIED = 4096;

/** Options for {@linkcode ReplicaSession}. */
export interface ReplicaSessionOptions {
  /** The clock for the watchdog, barrier deadlines and write-back answers. @default {the system's} */
  clock?: Clock;
  /**
   * The master's silence tolerated before the connection is left, ms (see `nextSilenceMs`).
   * @default {baseSilenceMs of the core's heartbeat}
   */
  silenceMs?: number;
}

/**
 * One connection of a replica to the master: the driver of the replica's state machine
 * (`replica_state.ts`). It reads the master's messages and feeds them to
 * {@linkcode ReplicaSession.step}, applies queued notifications in order through the
 * apply pipeline (`replica_apply.ts`), and runs what each step decides through the
 * executor (`replica_executor.ts`). Its only timers are the injected {@linkcode Clock}'s.
 */
export class ReplicaSession {
  readonly #core: ReplicaCore;
  readonly #transport: Transport;
  readonly #clock: Clock;
  readonly #fetcher: ContentFetcher;
  readonly #writeback: WritebackLoop;
  readonly #applier: VersionApplier;
  readonly #resync: ResyncSweep;
  readonly #executor: ReplicaExecutor;
  readonly #items = new AsyncQueue<ApplyItem>();
  readonly #waiters = new Map<number, (result: BarrierResult | null) => void>();
  #nextBarrier = 0;
  #state: ReplicaState;
  #closeReason: string | null = null;
  #closing = false;
  /** Notifications to carry to the next connection (see `ReplicaCore.carried`), in order. */
  #carry: NotificationMessage[] = [];
  /** Set once a notification could not be applied: nothing after it may be applied here. */
  #stopped = false;
  /** The applier failed midway: what is queued no longer follows what was applied. */
  #applyFailed = false;
  /** Inline-content bytes of the notifications queued for the applier. */
  #queuedBytes = 0;
  /** The armed retry of versions held back because their paths kept changing, if any. */
  #unsettledTimer: unknown = undefined;
  /** That retry's last wait (it doubles while they keep changing), and when it last ran. */
  #unsettledWaitMs = 0;
  #unsettledRanAt = -Infinity;

  /**
   * @param core The replica.
   * @param transport The connection to the master.
   * @param options See {@linkcode ReplicaSessionOptions}.
   */
  constructor(core: ReplicaCore, transport: Transport, options: ReplicaSessionOptions = {}) {
    this.#core = core;
    this.#transport = transport;
    this.#clock = options.clock ?? SYSTEM_CLOCK;
    const send = (message: WireMessage) => transport.send(message);
    this.#fetcher = new ContentFetcher({ cas: core.cas, send, partials: core.partials });
    this.#writeback = new WritebackLoop({
      journal: core.tables.journal,
      cas: core.cas,
      sandboxId: core.sandboxId,
      send,
      maxContentBytes: core.options.maxWritebackBytes ?? 64 * 1024 * 1024,
      // What one message carries, less room for the rest of the entry.
      maxWholeBytes: transport.maxPayload - 64 * 1024,
      timers: this.#clock,
      pieces: core.writeBackPieces,
      workspaceGone: () => core.workspace.gone() !== null,
      onResolved: (entries) => this.step({ type: "answered", entries }),
      onRefused: (entry) =>
        log("warn", "local change refused for write-back", {
          path: entry.path,
          size: entry.size,
          reason: entry.reason,
        }),
    });
    this.#applier = new VersionApplier({
      core,
      fetcher: this.#fetcher,
      releasing: (path) => this.#state.releasing.has(path),
      closing: () => this.#closing,
      remote: transport.remote,
      retryUnsettled: () => this.#retryUnsettled(),
    });
    this.#resync = new ResyncSweep(core);
    this.#executor = new ReplicaExecutor({
      core,
      transport,
      fetcher: this.#fetcher,
      writeback: this.#writeback,
      applier: this.#applier,
      resync: this.#resync,
      enqueue: (item) => {
        const owned = ownInline(item);
        this.#queuedBytes += inlineBytes(owned);
        this.#items.push(owned);
      },
      close: (reason) => this.close(reason),
      resolveBarrier: (id, result) => this.#settle(id, result),
      step: (event) => this.step(event),
    });
    const heartbeatMs = core.options.heartbeatMs ?? 1000;
    this.#state = initialReplicaState({
      mode: core.mode,
      silenceMs: options.silenceMs ?? baseSilenceMs(heartbeatMs),
      dataDirInside: core.workspace.layout.dataDirInside,
      applied: core.applied,
      masterSequence: core.masterSequence,
      resyncPending: core.resyncPending,
      now: this.#clock.now(),
    });
  }

  /** `syncing` (catching up), `resyncing` or `live`. */
  get state(): string {
    if (this.#state.resync) return "resyncing";
    return this.#state.reachedLive ? "live" : "syncing";
  }

  /** The state machine's state, as of the last step. */
  get protocolState(): ReplicaState {
    return this.#state;
  }

  /** Why the connection ends, once it does (the first reason given). */
  get closeReason(): string | null {
    return this.#closeReason;
  }

  /** Ends the connection; {@linkcode ReplicaSession.run} returns once its work stopped. */
  close(reason: string): void {
    this.#closeReason ??= reason;
    this.#closing = true;
    this.#transport.close();
  }

  /**
   * Feeds one event to the state machine and runs the actions it decides, in order.
   *
   * @returns A promise when an action waits (a send, the disk); actions that need not
   * wait run at once, so routing a message never yields.
   */
  step(event: ReplicaEvent): void | Promise<void> {
    const { state, actions } = stepReplica(this.#state, event);
    this.#state = state;
    this.#core.applied = state.applied;
    // A notification received tells where the master is as well as a heartbeat does: a
    // large change still being applied shows as the lag it is, not as none.
    this.#core.masterSequence = Math.max(state.masterSequence, state.highestReceived);
    return this.#execute(actions, 0);
  }

  /** The watchdog's look at the master's silence. */
  tick(): void {
    this.step({ type: "tick", now: this.#clock.now(), fetching: this.#fetcher.inFlight });
  }

  /**
   * Runs the connection until it ends; never throws.
   *
   * @returns Whether it reached live, why it ended, and whether that was the master's
   * silence.
   */
  async run(): Promise<{ reachedLive: boolean; reason: string; silent: boolean }> {
    const core = this.#core;
    log("info", "connected to the master", {
      remote: this.#transport.remote,
      sandbox_id: core.sandboxId,
      applied: core.applied,
    });
    const applying = this.#applyLoop().catch((error) => {
      this.#applyFailed = true;
      this.close(`apply failed: ${errorMessage(error)}`);
    });
    const writing = this.#writeback.run().catch((error) =>
      this.close(`write-back failed: ${errorMessage(error)}`)
    );
    core.masterTier.attach(this.#fetcher);
    const heartbeatMs = core.options.heartbeatMs ?? 1000;
    let watchdog: unknown;
    const watch = () => {
      watchdog = this.#clock.set(() => {
        this.tick();
        watch();
      }, Math.min(heartbeatMs, 1000));
    };
    watch();
    try {
      const carried = this.#state.resync
        ? []
        : carriedNotifications(core.carried, core.applied, MAX_CARRIED);
      core.carried = [];
      // Versions held back behind write-backs a past connection had answered when it
      // ended, before their release ran, or because their paths kept changing on disk:
      // nothing else would release them.
      this.#releaseHeldBack();
      if (carried.length === 0) await this.step({ type: "catchup" });
      else {
        // What the last connection carried is applied first, its content fetched now,
        // while the master sends nothing else; the catch-up then starts after it.
        log("info", "applying what the last connection carried", { notifications: carried.length });
        for (const msg of carried) {
          this.#executor.prefetch(msg);
          this.#queuedBytes += inlineBytes(msg);
          this.#items.push(msg);
        }
        this.#items.push({ type: "Catchup" });
      }
      for await (const msg of this.#transport.messages()) {
        const wasClosing = this.#closing;
        // Routing runs no action that waits: nothing to await here.
        this.step({ type: "message", message: msg, now: this.#clock.now() });
        if (!wasClosing && this.#closing) break; // the message itself was refused
        if (this.#items.size > HARD_MAX_QUEUED || this.#queuedBytes > HARD_MAX_QUEUED_BYTES) {
          this.close(
            `the master sent ${this.#items.size} items (${this.#queuedBytes} bytes inline) ` +
              `not applied yet, past the bound of ${HARD_MAX_QUEUED} (${HARD_MAX_QUEUED_BYTES}): ` +
              "it does not keep its window of unacknowledged notifications",
          );
          break;
        }
        // Back-pressure (see MAX_QUEUED): stop reading while the applier is far behind,
        // unless it waits for a content answer (they arrive on this same stream).
        // Prefetches still in flight do not count: while the master streams a catch-up
        // they nearly always are.
        while (
          (this.#items.size > MAX_QUEUED || this.#queuedBytes > MAX_QUEUED_BYTES) &&
          this.#fetcher.needed === 0 && !this.#closing
        ) {
          this.step({ type: "paused", now: this.#clock.now() }); // we are the ones not reading
          await new Promise<void>((resolve) => this.#clock.set(resolve, 5));
        }
      }
    } catch (error) {
      this.#closeReason ??= errorMessage(error);
    } finally {
      this.#clock.clear(watchdog);
      this.#clock.clear(this.#unsettledTimer);
      this.#closing = true;
      this.#transport.close();
      core.masterTier.detach(this.#fetcher);
      this.#fetcher.fail(new Error("connection closed"));
      this.#writeback.stop();
      this.#items.end();
      await applying;
      await writing;
      this.#carryOver();
      for (const id of [...this.#waiters.keys()]) this.#settle(id, null);
      this.#executor.finishProgress(false); // a catch-up still shown was cut short
      core.saveApplied();
    }
    return {
      reachedLive: this.#state.reachedLive,
      reason: this.#closeReason ?? "connection closed",
      silent: this.#state.leftSilent,
    };
  }

  /**
   * Sends a barrier and waits for its certified answer, the connection's end, or the
   * deadline (by the session's clock).
   *
   * @returns What the barrier found, or `null` when it certified nothing.
   */
  barrier(deadline: number): Promise<BarrierResult | null> {
    return new Promise((resolve) => {
      const id = this.#nextBarrier++;
      const timer = this.#clock.set(
        () => this.#settle(id, null),
        Math.max(0, deadline - this.#clock.now()),
      );
      this.#waiters.set(id, (result) => {
        this.#clock.clear(timer);
        resolve(result);
      });
      this.step({ type: "barrier", id }); // its send is not waited for
    });
  }

  /**
   * Queues a release of the versions held back whose paths wait for no write-back answer
   * (none open, none answered with its release still queued): each is weighed again.
   */
  #releaseHeldBack(): void {
    const { paths, journal } = this.#core.tables;
    const free = paths.deferredPaths().filter((path) =>
      !journal.hasOpen(path) && !this.#state.releasing.has(path)
    );
    if (free.length === 0) return;
    this.#items.push({ type: "Release", paths: free.map((path) => ({ path, restore: false })) });
  }

  /**
   * Arms one retry of the versions the applier held back because their paths kept
   * changing on disk, after a wait that doubles while they keep changing
   * (`unsettledRetryDelay`): a path rewritten without end costs a few looks at it a
   * second at most, and nothing grows (what is held back is in the store). The retry
   * queues a release behind what is queued.
   */
  #retryUnsettled(): void {
    if (this.#unsettledTimer !== undefined || this.#closing) return;
    const wait = unsettledRetryDelay(
      this.#unsettledWaitMs,
      this.#clock.now() - this.#unsettledRanAt,
    );
    this.#unsettledWaitMs = wait;
    this.#unsettledTimer = this.#clock.set(() => {
      this.#unsettledTimer = undefined;
      this.#unsettledRanAt = this.#clock.now();
      if (!this.#closing) this.#releaseHeldBack();
    }, wait);
  }

  #settle(id: number, result: BarrierResult | null): void {
    const waiter = this.#waiters.get(id);
    this.#waiters.delete(id);
    waiter?.(result);
  }

  #execute(actions: ReplicaAction[], from: number): void | Promise<void> {
    for (let at = from; at < actions.length; at++) {
      const pending = this.#executor.run(actions[at]!);
      if (pending) return pending.then(() => this.#execute(actions, at + 1));
    }
  }

  async #applyLoop(): Promise<void> {
    for await (const item of this.#items) {
      // Notifications left when the connection ends are carried to the next one, this
      // item first (it is already taken from the queue), after a batch cut short.
      if (this.#closing || this.#stopped) {
        if (item.type === "Notification") this.#carry.push(item);
        this.#items.end();
        return;
      }
      switch (item.type) {
        case "Notification": {
          const batch = [item, ...followingNotifications(item, this.#items)];
          for (const msg of batch) this.#queuedBytes -= inlineBytes(msg);
          await this.#applyNotifications(batch);
          break;
        }
        case "Heartbeat":
          await this.step({ type: "heartbeat", sequence: Number(item.agent_sequence) });
          break;
        case "BarrierConfirmation":
          await this.step({
            type: "confirmation",
            current: Number(item.current_sequence),
            satisfied: item.satisfied,
          });
          break;
        case "FullResyncRequired":
          await this.step({
            type: "resyncRequired",
            current: Number(item.current_sequence),
            reason: item.reason,
          });
          break;
        case "Release":
          await this.step({ type: "release", paths: item.paths });
          break;
        case "Catchup":
          await this.step({ type: "catchup" });
          break;
      }
      // Acknowledging never waits (an Ack is not awaited): no turn lost per item.
      const acked = this.step({ type: "handled", queued: this.#items.size });
      if (acked) await acked;
    }
  }

  async #applyNotifications(msgs: NotificationMessage[]): Promise<void> {
    if (this.#state.resync) { for (const msg of msgs) this.#resync.saw(msg.filepath); }
    // What was not prefetched as it arrived (too far ahead) is fetched from here on.
    for (const msg of msgs) this.#executor.prefetch(msg, false);
    const applier = this.#applier;
    applier.lostFetches = [];
    await applier.applyVersions(msgs.map((msg) => ({
      path: msg.filepath,
      version: {
        sequence: Number(msg.sequence),
        hash: msg.content_hash,
        mode: Number(msg.permissions),
        deleted: msg.is_deletion,
      },
      inline: msg.inline_content,
      size: Number(msg.size),
    })));
    if (applier.lostFetches.length > 0) {
      // The connection ended while content was fetched: what came before the first such
      // notification is applied; it and everything after it go to the next connection.
      const first = Math.min(...applier.lostFetches.map((item) => item.version.sequence));
      applier.lostFetches = [];
      this.#stopped = true;
      const cut = splitCutBatch(msgs, first, this.#state.applied);
      this.#carry = cut.carry;
      this.step({ type: "cut", applied: cut.applied });
      this.close("connection closed while fetching content");
      return;
    }
    for (const msg of msgs) this.#executor.updateProgress(Number(msg.sequence), Number(msg.size));
    this.step({
      type: "applied",
      last: Number(msgs[msgs.length - 1]!.sequence),
      count: msgs.length,
    });
  }

  /**
   * Keeps, for the next connection, the notifications this one received and did not
   * apply: the batch cut short by a lost fetch, then those still queued (see
   * `ReplicaCore.carried`). A resync starts over instead, and keeps nothing.
   */
  #carryOver(): void {
    const core = this.#core;
    if (this.#state.resync || core.resyncPending || this.#applyFailed) return;
    const queued = this.#items.takeWhile((_item): _item is ApplyItem => true)
      .filter((item): item is NotificationMessage => item.type === "Notification");
    core.carried = carriedNotifications([...this.#carry, ...queued], core.applied, MAX_CARRIED);
  }
}

/** The inline-content bytes an item holds. */
function inlineBytes(item: ApplyItem): number {
  return item.type === "Notification" ? item.inline_content?.byteLength ?? 0 : 0;
}

/**
 * The item, its inline content copied out when it is a view into a larger buffer. The
 * decoder's byte vectors alias the received chunk (64 KiB or more): a queued notification
 * holding a 2 KiB view would keep the whole chunk alive until it is applied, thousands of
 * them at a time during a catch-up.
 */
function ownInline(item: ApplyItem): ApplyItem {
  if (item.type !== "Notification") return item;
  const inline = item.inline_content;
  if (inline === null || inline.byteLength === inline.buffer.byteLength) return item;
  return { ...item, inline_content: inline.slice() };
}
