import { type Cas, CorruptContentError } from "../cas/mod.ts";
import { forEachLimited } from "../concurrency/mod.ts";
import type { DirectionalFilter } from "../filter/mod.ts";
import { errorMessage, log } from "../log/mod.ts";
import { metrics } from "../metrics/mod.ts";
import { inTransaction } from "../db/mod.ts";
import { ancestorsOf, PathError, PathSet, wirePathProblem } from "../paths/mod.ts";
import { isMissing } from "../disk/mod.ts";
import { isFolderMode, type Iteration, ORIGINS, type Store } from "../store/mod.ts";
import { FolderNotEmptyError, type Workspace } from "../workspace/mod.ts";
import type {
  BarrierConfirmationMessage,
  FullResyncRequiredMessage,
  HeartbeatMessage,
  NotificationMessage,
  WireMessage,
} from "../wire/mod.ts";
import { type ApplyAction, decideApply } from "./apply_decision.ts";
import type { Conflict } from "./conflict_log.ts";
import { ContentFetcher, ContentUnavailableError } from "./content_fetcher.ts";
import { diskMatches } from "./disk_check.ts";
import { type ConflictChoice, resolveConflict, type ResolveOutcome } from "./resolve_conflict.ts";
import { type CapturedChange, planJournalEntries } from "./journal_plan.ts";
import { SyncProgress } from "./progress.ts";
import type { MasterVersion, ReplicaPathState } from "./replica_paths.ts";
import { carriedNotifications, splitCutBatch } from "./carry_decision.ts";
import { byLevel, pathDepth } from "./_path_levels.ts";
import { openReplicaTables, type ReplicaTables } from "./replica_tables.ts";
import { validateSandboxId } from "./sandbox_id.ts";
import { AsyncQueue } from "./transports/_async_queue.ts";
import {
  type Connector,
  connectUnix,
  connectWebSocket,
  type Transport,
  TransportClosedError,
} from "./transports/mod.ts";
import type { JournalEntry, JournalState } from "./write_journal.ts";
import { reasonWord } from "./write_back_decision.ts";
import { WritebackLoop } from "./writeback_loop.ts";

/**
 * Origins of iterations a replica never writes back: what it applied from the master, and
 * a local-sync merge left with conflict markers for a person. Everything else recorded
 * here is a local change, whoever made it (an edit seen on disk, a REST write, a restore,
 * a rollback), and goes to the master, which records it under the sandbox's id.
 */
const NOT_WRITTEN_BACK: readonly string[] = [ORIGINS.master, ORIGINS.localSyncMerge];

/** How a replica treats a rejected write-back (PROTOCOL.md §6). */
export type ReplicaMode = "sandbox" | "local-sync";

/** Options for {@linkcode startReplica}. */
export interface ReplicaOptions {
  /** The replica's workspace: notifications are applied through it, its captures are journaled. */
  workspace: Workspace;
  /** The replica's store. @default {workspace.store} */
  store?: Store;
  /** The replica's CAS. @default {workspace.cas} */
  cas?: Cas;
  /** Directional filters. @default {workspace.filter} */
  filter?: DirectionalFilter;
  /** The master's Unix socket. */
  connect?: string | undefined;
  /** The master's WebSocket URL (`ws://…` or `wss://…`). */
  wsConnect?: string | undefined;
  /** Bearer token for the WebSocket. */
  token?: string | undefined;
  /** How to reach the master, instead of `connect`/`wsConnect`. */
  connector?: Connector;
  /** The replica's identity. @default {the stored one, or a new `sandbox-<uuid>` stored for next time} */
  sandboxId?: string | undefined;
  /** `sandbox` takes the master's version on a conflict; `local-sync` leaves it to a person. @default {"sandbox"} */
  mode?: ReplicaMode;
  /** The master's heartbeat interval; a master silent for 5 of them (at least 3 s) is reconnected. @default {1000} */
  heartbeatMs?: number;
  /** Largest content written back; larger local writes are refused here and listed. @default {67108864} */
  maxWritebackBytes?: number;
  /** First reconnect delay. @default {100} */
  backoffMinMs?: number;
  /** Longest reconnect delay. @default {5000} */
  backoffMaxMs?: number;
  /** Progress bar (`true`), log lines (`false`) or by terminal (`"auto"`). @default {"auto"} */
  progress?: boolean | "auto";
}

/** What {@linkcode ReplicaHandle.status} reports. */
export interface ReplicaStatus {
  /** `replica` (sandbox mode) or `local-sync`. */
  role: "replica" | "local-sync";
  /** The replica's identity. */
  sandboxId: string;
  /** Where the master is. */
  master: string;
  /** Whether a connection is up. */
  connected: boolean;
  /** `connecting`, `syncing` (catching up), `resyncing`, `live` or `closed`. */
  state: string;
  /** The highest master sequence applied here. */
  appliedSequence: number;
  /** The master's sequence as last heard. */
  masterSequence: number;
  /** Local changes not yet answered by the master. */
  pendingWriteBacks: number;
  /** Journal entries per state. */
  journal: Record<JournalState, number>;
  /** Rejected write-backs, newest first. */
  conflicts: Conflict[];
  /** Local changes refused here (too large), newest first. */
  refused: { path: string; size: number; reason: string; localSeq: number }[];
  /** Recent paths that could not be applied, with the reason. */
  problems: { path: string; reason: string }[];
  /** Connections made so far. */
  connections: number;
}

/** What {@linkcode ReplicaHandle.syncWait} found. */
export interface SyncWaitResult {
  /** Whether the replica holds everything the master held when asked. */
  satisfied: boolean;
  /** The master's sequence at the barrier. */
  masterSequence: number;
  /** The replica's applied sequence on return. */
  appliedSequence: number;
}

/** A running replica. */
export interface ReplicaHandle {
  /** The replica's identity. */
  readonly sandboxId: string;
  /** Connection, sequences, write-backs and conflicts. */
  status(): ReplicaStatus;
  /**
   * Resolves once the replica holds everything the master held when asked (a barrier),
   * or with `satisfied: false` after `timeoutMs`.
   */
  syncWait(timeoutMs: number): Promise<SyncWaitResult>;
  /** Settles a local-sync conflict of `path` as a person chose (see {@linkcode resolveConflict}). */
  resolveConflict(path: string, keep: ConflictChoice): Promise<ResolveOutcome>;
  /** Disconnects and stops; journaled changes stay for the next start. */
  close(): Promise<void>;
}

/**
 * Starts a replica (seed 001 "Sandbox Mode"): connects to the master, catches up and
 * applies its notifications to real files (atomically, content verified), fetches what
 * it lacks, acknowledges, journals local changes and writes them back, and reconnects
 * with exponential backoff after any failure, resuming from its last applied sequence.
 *
 * @param options See {@linkcode ReplicaOptions}.
 * @returns The running replica.
 * @throws {TypeError} For a bad sandbox id, or when no way to reach the master is given.
 *
 * @example Following a master
 * ```ts ignore
 * const workspace = await Workspace.open({ root: "/sandbox/ws" });
 * const replica = await startReplica({ workspace, connect: "/run/chronicle.sock" });
 * await replica.syncWait(30_000);
 * await replica.close();
 * ```
 */
export function startReplica(options: ReplicaOptions): Promise<ReplicaHandle> {
  const replica = new Replica(options);
  replica.start();
  return Promise.resolve(replica);
}

const APPLIED_META = "replica.applied_sequence";
const JOURNALED_META = "replica.journaled_through";
const SANDBOX_META = "replica.sandbox_id";
const RESYNC_META = "replica.resync_pending";
/**
 * A catch-up spanning at least this many sequences is large: it shows progress, and the
 * workspace's watcher is suspended while it is applied (see {@linkcode Workspace.suspendWatching}).
 */
const LARGE_CATCHUP = 500;
/** Acks sent at least this often while applying a long replay. */
const ACK_EVERY = 256;
const MAX_PROBLEMS = 100;
/** Notifications queued for the applier beyond which reading from the master pauses. */
const MAX_QUEUED = 4096;
/**
 * Most notifications applied together (see {@linkcode Workspace.applyChanges}): one
 * transaction records them, after flushes that overlap the writes. Inline content keeps
 * such a batch under 8 MiB.
 */
const APPLY_BATCH = 2048;
/** Paths whose disk state is checked, and content gathered, at once. */
const APPLY_CONCURRENCY = 16;
/**
 * Most notifications kept from a connection that ended before they were applied (see
 * `Replica.carried`); the rest are sent again by the next catch-up.
 */
const MAX_CARRIED = MAX_QUEUED;

/** A master version of a path waiting to be applied, with its inline content if any. */
interface PendingVersion {
  path: string;
  version: MasterVersion;
  inline: Uint8Array | null;
}

/** A version to write or remove on disk; `createOnly` writes refuse anything found there. */
type ChangeToMake = PendingVersion & { action: "write" | "remove"; createOnly?: boolean };

/** What `ReplicaSession.#makeChanges` did with a batch. */
interface MadeChanges {
  made: number;
  taken: ChangeToMake[];
  corrupt: ChangeToMake[];
}

type ApplyItem =
  | NotificationMessage
  | HeartbeatMessage
  | BarrierConfirmationMessage
  | FullResyncRequiredMessage
  | { type: "Release"; paths: { path: string; restore: boolean }[] }
  | { type: "Catchup" };

class Replica implements ReplicaHandle {
  readonly sandboxId: string;
  readonly workspace: Workspace;
  readonly store: Store;
  readonly cas: Cas;
  readonly filter: DirectionalFilter;
  readonly tables: ReplicaTables;
  readonly mode: ReplicaMode;
  readonly options: ReplicaOptions;
  readonly #connector: Connector;
  readonly #master: string;
  applied: number;
  /**
   * Notifications that arrived on a connection which ended before they could be applied
   * (mostly: their content was still being fetched), in the order they came, all after
   * `applied`. The next connection fetches their content and applies them before it asks
   * to catch up, from after them: each connection keeps what it carried, however often
   * connections are cut, instead of asking again for the same start of a replay.
   */
  carried: NotificationMessage[] = [];
  masterSequence = 0;
  problems: { path: string; reason: string }[] = [];
  #session: ReplicaSession | null = null;
  #sessionWaiters: (() => void)[] = [];
  #connections = 0;
  #closed = false;
  #wakeClosed!: () => void;
  readonly #closedSignal = new Promise<void>((resolve) => this.#wakeClosed = resolve);
  #loop: Promise<void> = Promise.resolve();
  /** The store sequence up to which local changes are journaled (or found to be none). */
  #journaledThrough = 0;
  #unsubscribe: () => void = () => {};

  constructor(options: ReplicaOptions) {
    this.options = options;
    this.workspace = options.workspace;
    this.store = options.store ?? options.workspace.store;
    this.cas = options.cas ?? options.workspace.cas;
    this.filter = options.filter ?? options.workspace.filter;
    this.mode = options.mode ?? "sandbox";
    this.tables = openReplicaTables(this.store.db);
    const stored = this.store.getMeta(SANDBOX_META);
    this.sandboxId = validateSandboxId(
      options.sandboxId ?? stored ?? `sandbox-${crypto.randomUUID()}`,
    );
    if (stored !== this.sandboxId) this.store.setMeta(SANDBOX_META, this.sandboxId);
    this.applied = Number(this.store.getMeta(APPLIED_META) ?? "0") || 0;
    if (options.connector) {
      this.#connector = options.connector;
      this.#master = "custom connector";
    } else if (options.connect) {
      const path = options.connect;
      this.#connector = () => connectUnix(path);
      this.#master = `unix:${path}`;
    } else if (options.wsConnect) {
      const url = options.wsConnect;
      const token = options.token;
      this.#connector = () => connectWebSocket(url, { token });
      this.#master = url;
    } else {
      throw new TypeError("A replica needs the master's address: give connect or wsConnect");
    }
  }

  start(): void {
    // Journal local changes captured while no replica ran (or before a crash), then
    // every new capture: both in this same tick, so none falls between.
    // A journal from before the meta key was kept tells it by its entries alone.
    this.#journaledThrough = Math.max(
      Number(this.store.getMeta(JOURNALED_META) ?? "0") || 0,
      this.tables.journal.sourceHighWater(),
    );
    const missed = this.store.changesSince(this.#journaledThrough, {
      notOrigins: NOT_WRITTEN_BACK,
    });
    this.journalCaptured(missed);
    // Every local iteration, whoever recorded it: a capture, a write through the API, a
    // command run against this database.
    this.#unsubscribe = this.store.onRecorded((recorded) => this.journalCaptured(recorded));
    this.#loop = this.#connectLoop();
  }

  /**
   * Turns local changes (iterations of this workspace's origin) into journal entries. A
   * path found holding a master version this replica was writing or removing when it
   * stopped (see `ApplyIntents`) is that version, applied: not a local change.
   */
  journalCaptured(recorded: Iteration[]): void {
    if (this.#closed || recorded.length === 0) return;
    const { paths, journal, intents } = this.tables;
    const changes: CapturedChange[] = [];
    const adopted = new Map<string, MasterVersion>();
    const seen = new Map<string, number>();
    const deferred = new Set<string>();
    const filtered = new Set<string>();
    let through = 0;
    const own = recorded.filter((iteration) => !NOT_WRITTEN_BACK.includes(iteration.origin));
    const states = paths.getMany(own.map((iteration) => iteration.path));
    for (const current of own) {
      through = Math.max(through, current.sequence);
      const state = states.get(current.path)!;
      const applied = adopted.get(current.path)?.sequence ?? state.applied.sequence;
      const version = intents.match(current.path, current.hash, current.mode);
      // Only a version newer than the one applied: a note left by a failed write is stale
      // once a later version of the path was applied.
      if (version && version.sequence > applied) {
        adopted.set(current.path, version);
        continue;
      }
      const previous = current.iteration > 1
        ? this.store.iteration(current.path, current.iteration - 1)
        : undefined;
      changes.push({ current, previous });
      seen.set(current.path, applied);
      if (state.deferred) deferred.add(current.path);
      if (this.filter.toMaster.ignores(current.path)) filtered.add(current.path);
    }
    if (through === 0) return; // none of this workspace's own (the replica's applies)
    inTransaction(this.store.db, () => {
      for (const [path, version] of adopted) paths.setApplied(path, version);
      // Changes journaled as nothing (adopted, filtered) are never looked at again either.
      if (through > this.#journaledThrough) {
        this.store.setMeta(JOURNALED_META, String(through));
        this.#journaledThrough = through;
      }
      // Last: the journal tells its listeners at once.
      journal.append(planJournalEntries(changes, { seen, deferred, filtered }));
    });
  }

  status(): ReplicaStatus {
    const { journal, conflicts } = this.tables;
    const counts = journal.counts();
    const session = this.#session;
    return {
      role: this.mode === "sandbox" ? "replica" : "local-sync",
      sandboxId: this.sandboxId,
      master: this.#master,
      connected: session !== null,
      state: this.#closed ? "closed" : session?.state ?? "connecting",
      appliedSequence: this.applied,
      masterSequence: Math.max(this.masterSequence, this.applied),
      pendingWriteBacks: counts.pending + counts.sent,
      journal: counts,
      conflicts: conflicts.list({ limit: 100 }),
      refused: journal.list("refused", 100).map((entry) => ({
        path: entry.path,
        size: entry.size,
        reason: entry.reason ?? "",
        localSeq: entry.localSeq,
      })),
      problems: [...this.problems],
      connections: this.#connections,
    };
  }

  async syncWait(timeoutMs: number): Promise<SyncWaitResult> {
    const deadline = Date.now() + timeoutMs;
    while (!this.#closed && Date.now() < deadline) {
      const session = await this.#currentSession(deadline);
      if (!session) break;
      const result = await session.barrier(deadline);
      if (result) return result;
      // Asked before the connection's catch-up or during a resync: ask again shortly.
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return {
      satisfied: false,
      masterSequence: this.masterSequence,
      appliedSequence: this.applied,
    };
  }

  resolveConflict(path: string, keep: ConflictChoice): Promise<ResolveOutcome> {
    return resolveConflict(this, path, keep);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#unsubscribe();
    this.#wakeClosed();
    this.#session?.close("replica shutting down");
    await this.#loop;
    this.saveApplied();
    this.resumeWatching(); // the workspace may outlive the replica
  }

  get closed(): boolean {
    return this.#closed;
  }

  saveApplied(): void {
    if (this.store.db.isOpen) this.store.setMeta(APPLIED_META, String(this.applied));
  }

  get resyncPending(): boolean {
    return this.store.getMeta(RESYNC_META) === "1";
  }

  set resyncPending(value: boolean) {
    this.store.setMeta(RESYNC_META, value ? "1" : "0");
  }

  /**
   * Pauses the workspace's watcher for a large catch-up: every file applied would come
   * back as an event. Local changes made meanwhile are not overwritten unseen (each apply
   * checks the disk first, but for a write landing between that check and the rename: see
   * `#makeChanges`) and are recorded by the scan that resumes it. A
   * connection lost midway leaves it paused for the next one, which goes on with the
   * catch-up.
   */
  async pauseWatching(): Promise<void> {
    if (!this.workspace.watching) return;
    await this.workspace.suspendWatching();
    log("info", "watching paused during the catch-up; a scan follows it");
  }

  /**
   * Resumes the watcher {@linkcode pauseWatching} paused: once in sync, when the master
   * cannot be reached, or on close. The resuming scan runs in the background, its
   * captures in turns of the workspace's queue between the notifications applied. A
   * workspace that is watched, or never was, is left as it is (see `resumeWatching`).
   */
  resumeWatching(): void {
    if (this.workspace.watching) return;
    this.workspace.resumeWatching().then(() => {
      if (this.workspace.watching) {
        log("info", "watching resumed; what changed meanwhile is recorded");
      }
    }).catch((error) => log("error", "cannot watch the workspace again", { error }));
  }

  noteProblem(path: string, reason: string): void {
    log("warn", "not applied", { path, reason });
    this.problems.push({ path, reason });
    if (this.problems.length > MAX_PROBLEMS) this.problems.shift();
  }

  async #connectLoop(): Promise<void> {
    const min = this.options.backoffMinMs ?? 100;
    const max = this.options.backoffMaxMs ?? 5000;
    let delay = min;
    let failures = 0;
    while (!this.#closed) {
      let transport: Transport | null = null;
      try {
        transport = await this.#connector();
      } catch (error) {
        if (failures++ === 0) {
          log("warn", "cannot reach the master; retrying", { master: this.#master, error });
        }
        this.resumeWatching(); // no catch-up to wait for: local changes matter again
      }
      if (transport && this.#closed) {
        transport.close(); // closed while connecting: no session may start
        break;
      }
      if (transport) {
        failures = 0;
        this.#connections++;
        const session = new ReplicaSession(this, transport);
        this.#session = session;
        for (const wake of this.#sessionWaiters.splice(0)) wake();
        const outcome = await session.run();
        this.#session = null;
        if (this.#closed) break;
        log("warn", "disconnected from the master; reconnecting", {
          master: this.#master,
          reason: outcome.reason,
        });
        if (outcome.reachedLive) delay = min;
      }
      // Full jitter keeps many replicas from reconnecting in step after a master restart.
      const wait = delay / 2 + Math.random() * delay / 2;
      delay = Math.min(delay * 2, max);
      await Promise.race([this.#closedSignal, new Promise((r) => setTimeout(r, wait))]);
    }
  }

  #currentSession(deadline: number): Promise<ReplicaSession | null> {
    if (this.#session) return Promise.resolve(this.#session);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(null), Math.max(0, deadline - Date.now()));
      this.#sessionWaiters.push(() => {
        clearTimeout(timer);
        resolve(this.#session);
      });
    });
  }
}

/** A reconciliation from scratch in progress (PROTOCOL.md §4). */
interface Resync {
  /** The master sequence the reconciliation must reach, once known. */
  target: number | null;
  /** Paths the master mentioned since the reconciliation began. */
  seen: Set<string>;
}

/** One connection of a replica to the master. */
class ReplicaSession {
  readonly #replica: Replica;
  readonly #transport: Transport;
  readonly #fetcher: ContentFetcher;
  readonly #writeback: WritebackLoop;
  readonly #items = new AsyncQueue<ApplyItem>();
  readonly #barriers: {
    purpose: "probe" | "wait";
    resolve: (result: SyncWaitResult | null) => void;
  }[] = [];
  #resync: Resync | null = null;
  #progress: SyncProgress | null = null;
  #reachedLive = false;
  #closeReason: string | null = null;
  #closing = false;
  #lastMessageAt = Date.now();
  #ackInFlight = false;
  #ackAgain = false;
  #lastAcked = 0;
  #sinceAck = 0;
  #askedForResync = false;
  #since = 0;
  /** The master's sequence when this connection began (from the probe): in sync once reached. */
  #catchupTarget: number | null = null;
  /** Whether the `CatchupRequest` was sent (acks wait for it: the master refuses them before). */
  #catchupSent = false;
  /** Versions not applied because the connection ended while their content was fetched. */
  #lostFetches: PendingVersion[] = [];
  /** Notifications to carry to the next connection (see `Replica.carried`), in order. */
  #carry: NotificationMessage[] = [];
  /** Set once a notification could not be applied: nothing after it may be applied here. */
  #stopped = false;
  /** The applier failed midway: what is queued no longer follows what was applied. */
  #applyFailed = false;
  /**
   * Paths answered by the master whose `Release` is queued and not run yet, with how many
   * such releases each: until it runs, a path still holds what the replica wrote (a file
   * where the master now has a folder), so master versions of it and inside it wait too.
   */
  readonly #releasing = new Map<string, number>();
  /** Paths whose write-back the master accepted on this connection. */
  readonly #acceptedHere = new Set<string>();

  constructor(replica: Replica, transport: Transport) {
    this.#replica = replica;
    this.#transport = transport;
    const send = (message: WireMessage) => transport.send(message);
    this.#fetcher = new ContentFetcher({ cas: replica.cas, send });
    const maxWriteback = Math.min(
      replica.options.maxWritebackBytes ?? 64 * 1024 * 1024,
      transport.maxPayload - 64 * 1024,
    );
    this.#writeback = new WritebackLoop({
      journal: replica.tables.journal,
      cas: replica.cas,
      sandboxId: replica.sandboxId,
      send,
      maxContentBytes: maxWriteback,
      onResolved: (entries) => this.#resolved(entries),
      onRefused: (entry) =>
        log("warn", "local change refused for write-back", {
          path: entry.path,
          size: entry.size,
          reason: entry.reason,
        }),
    });
  }

  get state(): string {
    if (this.#resync) return "resyncing";
    return this.#reachedLive ? "live" : "syncing";
  }

  close(reason: string): void {
    this.#closeReason ??= reason;
    this.#closing = true;
    this.#transport.close();
  }

  /** Runs the connection until it ends; never throws. */
  async run(): Promise<{ reachedLive: boolean; reason: string }> {
    const replica = this.#replica;
    log("info", "connected to the master", {
      remote: this.#transport.remote,
      sandbox_id: replica.sandboxId,
      applied: replica.applied,
    });
    const applying = this.#applyLoop().catch((error) => {
      this.#applyFailed = true;
      this.close(`apply failed: ${errorMessage(error)}`);
    });
    const writing = this.#writeback.run().catch((error) =>
      this.close(`write-back failed: ${errorMessage(error)}`)
    );
    const heartbeatMs = replica.options.heartbeatMs ?? 1000;
    const silence = Math.max(3000, 5 * heartbeatMs);
    const watchdog = setInterval(() => {
      // Before the catch-up the master is silent unless asked for content: only a fetch
      // left unanswered counts as its silence then.
      if (!this.#catchupSent && this.#fetcher.inFlight === 0) this.#lastMessageAt = Date.now();
      if (Date.now() - this.#lastMessageAt > silence) {
        this.close(`master silent for more than ${silence} ms`);
      }
    }, Math.min(heartbeatMs, 1000));
    try {
      const resync = replica.resyncPending;
      if (resync) this.#resync = { target: null, seen: new Set() };
      const carried = resync
        ? []
        : carriedNotifications(replica.carried, replica.applied, MAX_CARRIED);
      replica.carried = [];
      // Versions held back behind write-backs a past connection had answered when it
      // ended, before their release ran: nothing else would release them.
      const { paths, journal } = replica.tables;
      const answered = paths.deferredPaths().filter((path) => !journal.hasOpen(path));
      if (answered.length > 0) {
        this.#items.push({
          type: "Release",
          paths: answered.map((path) => ({ path, restore: false })),
        });
      }
      if (carried.length === 0) await this.#requestCatchup();
      else {
        // What the last connection carried is applied first, its content fetched now,
        // while the master sends nothing else; the catch-up then starts after it.
        log("info", "applying what the last connection carried", { notifications: carried.length });
        for (const msg of carried) {
          this.#prefetch(msg);
          this.#items.push(msg);
        }
        this.#items.push({ type: "Catchup" });
      }
      for await (const msg of this.#transport.messages()) {
        this.#lastMessageAt = Date.now();
        const problem = this.#dispatch(msg);
        if (problem) {
          this.close(problem);
          break;
        }
        // Back-pressure: stop reading while the applier is far behind, unless content
        // answers it waits for are still to come (they arrive on this same stream).
        while (
          this.#items.size > MAX_QUEUED && this.#fetcher.inFlight === 0 && !this.#closing
        ) {
          this.#lastMessageAt = Date.now(); // we are the ones not reading
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      }
    } catch (error) {
      this.#closeReason ??= errorMessage(error);
    } finally {
      clearInterval(watchdog);
      this.#closing = true;
      this.#transport.close();
      this.#fetcher.fail(new Error("connection closed"));
      this.#writeback.stop();
      this.#items.end();
      await applying;
      await writing;
      this.#carryOver();
      for (const barrier of this.#barriers.splice(0)) barrier.resolve(null);
      this.#progress?.finish();
      replica.saveApplied();
    }
    return { reachedLive: this.#reachedLive, reason: this.#closeReason ?? "connection closed" };
  }

  /** Asks the master to catch this replica up from what it applied, after a probe. */
  async #requestCatchup(): Promise<void> {
    const replica = this.#replica;
    if (!this.#resync) replica.saveApplied();
    this.#since = this.#resync ? 0 : replica.applied;
    this.#catchupSent = true;
    // The probe tells how far the master is, for progress; it certifies nothing. Both
    // are queued at once, so no barrier of syncWait() can slip in before the catch-up
    // (the master answers a barrier before a catch-up at once, certifying nothing).
    this.#barriers.push({ purpose: "probe", resolve: () => {} });
    await Promise.all([
      this.#transport.send({ type: "BarrierRequest", sequence: 0n }),
      this.#transport.send({
        type: "CatchupRequest",
        sandbox_id: replica.sandboxId,
        since_sequence: BigInt(this.#since),
      }),
    ]);
  }

  /** Sends a barrier and waits for its certified answer, the connection's end, or the deadline. */
  barrier(deadline: number): Promise<SyncWaitResult | null> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(null), Math.max(0, deadline - Date.now()));
      this.#barriers.push({
        purpose: "wait",
        resolve: (result) => {
          clearTimeout(timer);
          resolve(result);
        },
      });
      this.#transport.send({ type: "BarrierRequest", sequence: 0n }).catch(() => {});
    });
  }

  /** Routes a message: answers go straight to their owners, the rest is applied in order. */
  #dispatch(msg: WireMessage): string | null {
    switch (msg.type) {
      case "Notification": {
        const path = msg.filepath;
        const wrong = wirePathProblem(path, this.#replica.workspace.layout.dataDirInside);
        if (wrong?.escapes) return `notification for a path leaving the workspace: "${path}"`;
        if (wrong) {
          // Skipped, not fatal: a later heartbeat moves the position past it.
          this.#replica.noteProblem(path, `not applied: ${wrong.problem}`);
          return null;
        }
        this.#prefetch(msg);
        this.#items.push(msg);
        return null;
      }
      case "FullResyncRequired":
        // Every answer on this connection counts in the numbering the resync reaches (a
        // replaced master starts again); what was accepted before it does not.
        this.#replica.tables.paths.forgetMasterSequences(this.#acceptedHere);
        this.#items.push(msg);
        return null;
      case "Heartbeat":
      case "BarrierConfirmation":
        this.#items.push(msg);
        return null;
      case "ContentFetchResponse":
      case "ContentNotFound":
        this.#fetcher.onAnswer(msg);
        return null;
      case "WriteBackResult":
        this.#writeback.onResult(msg);
        return null;
      default:
        return `unexpected ${msg.type} from the master`;
    }
  }

  /** Starts fetching content a notification will need, so fetches overlap. */
  #prefetch(msg: NotificationMessage): void {
    if (msg.is_deletion || msg.inline_content !== null) return;
    const { store, filter } = this.#replica;
    if (filter.toReplica.ignores(msg.filepath)) return;
    if (store.latest(msg.filepath)?.hash === msg.content_hash) return;
    this.#fetcher.ensure(msg.content_hash, Number(msg.size)).catch(() => {});
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
        case "Notification":
          await this.#applyNotifications([item, ...this.#followingNotifications(item)]);
          break;
        case "Heartbeat":
          await this.#certified(Number(item.agent_sequence), true);
          break;
        case "BarrierConfirmation":
          await this.#confirmation(item);
          break;
        case "FullResyncRequired":
          await this.#startResync(item);
          break;
        case "Release":
          for (const { path } of item.paths) {
            const left = (this.#releasing.get(path) ?? 1) - 1;
            if (left > 0) this.#releasing.set(path, left);
            else this.#releasing.delete(path);
          }
          await this.#releaseAll(item.paths);
          break;
        case "Catchup":
          await this.#requestCatchup();
          break;
      }
      if (this.#items.size === 0 || this.#sinceAck >= ACK_EVERY) this.#ack();
    }
  }

  /**
   * Takes the notifications queued right behind `first`, for paths unrelated to each other
   * and to `first`'s, so that all of them can be applied at once; but for folders created
   * in the batch, which may hold later paths of it (they are made first, a level at a
   * time: see `#makeChanges`). Without that, every folder of a catch-up would end a batch.
   */
  #followingNotifications(first: NotificationMessage): NotificationMessage[] {
    const others = new PathSet(); // every path but the folders created
    const created = new Set<string>();
    const holdingCreated = new Set<string>(); // the ancestors of the folders created
    let size = 0;
    const take = (msg: NotificationMessage): boolean => {
      const path = msg.filepath;
      if (others.overlaps(path) || created.has(path) || holdingCreated.has(path)) return false;
      if (!msg.is_deletion && isFolderMode(Number(msg.permissions))) {
        created.add(path);
        for (const ancestor of ancestorsOf(path)) holdingCreated.add(ancestor);
      } else others.add(path);
      size++;
      return true;
    };
    take(first);
    return this.#items.takeWhile((item): item is NotificationMessage =>
      item.type === "Notification" && size < APPLY_BATCH && take(item)
    );
  }

  async #applyNotifications(msgs: NotificationMessage[]): Promise<void> {
    for (const msg of msgs) this.#resync?.seen.add(msg.filepath);
    this.#lostFetches = [];
    await this.#applyVersions(msgs.map((msg) => ({
      path: msg.filepath,
      version: {
        sequence: Number(msg.sequence),
        hash: msg.content_hash,
        mode: Number(msg.permissions),
        deleted: msg.is_deletion,
      },
      inline: msg.inline_content,
    })));
    if (this.#lostFetches.length > 0) {
      // The connection ended while content was fetched: what came before the first such
      // notification is applied; it and everything after it go to the next connection.
      const first = Math.min(...this.#lostFetches.map((item) => item.version.sequence));
      this.#lostFetches = [];
      this.#stopped = true;
      const cut = splitCutBatch(msgs, first, this.#replica.applied);
      this.#carry = cut.carry;
      if (!this.#resync) this.#replica.applied = cut.applied;
      this.close("connection closed while fetching content");
      return;
    }
    this.#sinceAck += msgs.length;
    for (const msg of msgs) this.#progress?.update(Number(msg.sequence), Number(msg.size));
    // A replay crosses sequences in order: everything up to the last one is applied. During
    // a resync the position waits for the sweep of paths the master no longer has.
    const last = Number(msgs[msgs.length - 1]!.sequence);
    if (!this.#resync && last > this.#replica.applied) this.#replica.applied = last;
  }

  /** Everything up to `sequence` has been received (a heartbeat or a satisfied barrier). */
  async #certified(sequence: number, heartbeat: boolean): Promise<void> {
    const replica = this.#replica;
    replica.masterSequence = sequence;
    if (this.#resync) {
      if (this.#resync.target !== null && sequence >= this.#resync.target) {
        await this.#finishResync(sequence);
      }
      return;
    }
    if (sequence < replica.applied) {
      // The master is behind what we applied: it was replaced. Ask; it will require a resync.
      if (heartbeat && !this.#askedForResync) {
        this.#askedForResync = true;
        await this.#transport.send({
          type: "CatchupRequest",
          sandbox_id: replica.sandboxId,
          since_sequence: BigInt(replica.applied),
        });
      }
      return;
    }
    replica.applied = sequence;
    // A heartbeat during a long replay certifies only what was sent so far.
    if (!this.#reachedLive && this.#catchupTarget !== null && sequence >= this.#catchupTarget) {
      this.#reachedLive = true;
      this.#progress?.finish();
      this.#progress = null;
      log("info", "replica in sync", { sequence });
      this.#dropAppliedIntents();
      this.#replica.resumeWatching();
    }
  }

  /** Forgets notes of versions applied since; the rest still tell crash-left files apart. */
  #dropAppliedIntents(): void {
    const { intents, paths } = this.#replica.tables;
    intents.dropSuperseded((path) => paths.get(path).applied.sequence);
  }

  async #confirmation(msg: BarrierConfirmationMessage): Promise<void> {
    const barrier = this.#barriers.shift();
    const current = Number(msg.current_sequence);
    if (!barrier) return;
    if (barrier.purpose === "probe") {
      this.#replica.masterSequence = current;
      this.#catchupTarget = current;
      if (this.#resync && this.#resync.target === null) this.#resync.target = current;
      if (current - this.#since >= LARGE_CATCHUP) {
        await this.#replica.pauseWatching();
        this.#progress = new SyncProgress({
          label: this.#resync ? "full resync" : this.#since === 0 ? "initial sync" : "catch-up",
          from: this.#since,
          to: current,
          tty: this.#replica.options.progress ?? "auto",
        });
      }
      return;
    }
    if (!msg.satisfied) {
      barrier.resolve(null); // not certified (asked too early): syncWait asks again
      return;
    }
    await this.#certified(current, false);
    const replica = this.#replica;
    const done = !this.#resync && replica.applied >= current;
    barrier.resolve(
      done ? { satisfied: true, masterSequence: current, appliedSequence: replica.applied } : null,
    );
  }

  async #startResync(msg: FullResyncRequiredMessage): Promise<void> {
    const replica = this.#replica;
    const target = Number(msg.current_sequence);
    log("warn", "full resync required", { reason: msg.reason, master_sequence: target });
    replica.resyncPending = true;
    this.#resync = { target, seen: new Set() };
    this.#since = 0;
    this.#progress?.finish();
    if (target >= LARGE_CATCHUP) await this.#replica.pauseWatching();
    this.#progress = target >= LARGE_CATCHUP
      ? new SyncProgress({
        label: "full resync",
        from: 0,
        to: target,
        tty: replica.options.progress ?? "auto",
      })
      : null;
    await this.#transport.send({
      type: "CatchupRequest",
      sandbox_id: replica.sandboxId,
      since_sequence: 0n,
    });
  }

  /**
   * Ends a resync: every path the master mentioned is applied; remove local files it no
   * longer has, except filtered paths and local changes still waiting for write-back.
   */
  async #finishResync(sequence: number): Promise<void> {
    const replica = this.#replica;
    const seen = this.#resync!.seen;
    const { journal, paths } = replica.tables;
    const live = replica.store.list();
    // A local change the master accepted after `sequence`: the master holds it, and its
    // notification of it is still on the way (it comes after what the resync reached).
    const acceptedLater = paths.acceptedAfter(sequence);
    const keep = (path: string) =>
      seen.has(path) || journal.hasOpen(path) || acceptedLater.has(path) ||
      replica.filter.toReplica.ignores(path) || replica.filter.local.ignores(path);
    const holding = new Set<string>(); // folders holding a path kept here
    for (const { path } of live) {
      if (keep(path)) {
        for (const a of ancestorsOf(path)) holding.add(a);
      }
    }
    const version = { sequence, hash: "", mode: 0, deleted: true };
    const gone = live.filter(({ path }) => !keep(path)).map(({ path, mode }) => ({
      path,
      folder: isFolderMode(mode),
      version,
      inline: null,
      action: "remove" as const,
    }));
    // Files first, then folders deepest first, a level at a time (paths of one batch are
    // unrelated); a folder holding a path kept here stays (PROTOCOL.md §8).
    const batches = [
      gone.filter((item) => !item.folder),
      ...byLevel(
        gone.filter((item) => item.folder && !holding.has(item.path)),
        (folder) => pathDepth(folder.path),
        "deepest",
      ),
    ];
    let removed = 0;
    for (const batch of batches) {
      for (let at = 0; at < batch.length; at += APPLY_BATCH) {
        removed += (await this.#makeChanges(batch.slice(at, at + APPLY_BATCH))).made;
      }
    }
    this.#resync = null;
    replica.applied = sequence;
    replica.resyncPending = false;
    replica.saveApplied();
    log("info", "full resync done", { sequence, removed });
    this.#dropAppliedIntents();
    this.#progress?.finish();
    this.#progress = null;
    this.#reachedLive = true;
    this.#replica.resumeWatching();
  }

  /**
   * {@linkcode #release} for each path, shallowest first (a folder restored before what it
   * holds), then for the paths inside each that were held back behind it.
   */
  async #releaseAll(released: { path: string; restore: boolean }[]): Promise<void> {
    const sorted = [...released].sort((a, b) => pathDepth(a.path) - pathDepth(b.path));
    for (const { path, restore } of sorted) await this.#release(path, restore);
    for (const { path } of sorted) {
      for (const inside of this.#replica.tables.paths.deferredInside(path)) {
        await this.#release(inside, false);
      }
    }
    // A folder the master removed was kept while it held what was just released (§8):
    // removed now if that left it empty, deepest first (one still holding something stays).
    const folders = new Set(sorted.flatMap(({ path }) => ancestorsOf(path)));
    for (const folder of [...folders].sort((a, b) => pathDepth(b) - pathDepth(a))) {
      const { applied, deferred } = this.#replica.tables.paths.get(folder);
      if (applied.sequence > 0 && applied.deleted && !deferred) await this.#release(folder, true);
    }
  }

  /** After write-back answers: apply what was held back, or take the master's version. */
  async #release(path: string, restore: boolean): Promise<void> {
    const { journal, paths } = this.#replica.tables;
    if (journal.hasOpen(path)) return;
    const state = paths.get(path);
    const target = state.deferred ?? (restore ? state.applied : null);
    if (!target) return;
    this.#lostFetches = [];
    await this.#applyVersions([{ path, version: target, inline: null }]);
    // Kept as deferred: released again once write-backs are answered on a next connection.
    if (this.#lostFetches.length > 0) throw new TransportClosedError(this.#transport.remote);
  }

  /**
   * Applies master versions of unrelated paths: decide each, check the disk and gather
   * content many at a time, then write them all at once (one store transaction).
   */
  async #applyVersions(items: PendingVersion[], attempt = 0): Promise<void> {
    const replica = this.#replica;
    const { workspace, tables } = replica;
    const toMake: Array<
      PendingVersion & { action: "write" | "remove"; local: Iteration | undefined }
    > = [];
    const held: PendingVersion[] = [];
    const deferred: PendingVersion[] = [];
    const paths = items.map((item) => item.path);
    const locals = replica.store.latestOf(paths);
    const states = tables.paths.getMany(paths);
    for (const item of items) {
      // The disk is later compared with this same record: a change recorded meanwhile
      // then shows as a difference, and the version is decided again.
      const local = locals.get(item.path);
      const action = this.#decide(item, local, states.get(item.path)!);
      switch (action) {
        case "skip-filtered":
        case "skip-superseded":
          break;
        case "noop":
          held.push(item);
          break;
        case "defer":
          if (item.version.deleted || await this.#holdContent(item)) deferred.push(item);
          break;
        default:
          toMake.push({ ...item, action, local });
      }
    }
    if (deferred.length > 0) await replica.cas.syncDeferred(); // held durably before remembered
    // Already held here (a resync finds most files so): remembered in one transaction, with
    // the versions deferred behind a local change.
    inTransaction(replica.store.db, () => {
      for (const item of held) tables.paths.setApplied(item.path, item.version);
      for (const item of deferred) tables.paths.defer(item.path, item.version);
    });
    const ready: ChangeToMake[] = [];
    const changedOnDisk: PendingVersion[] = [];
    await forEachLimited(toMake, APPLY_CONCURRENCY, async (item) => {
      // Where nothing is recorded the write itself refuses whatever it finds on disk, with
      // no window between a look and the write (and no look at all for a new path).
      const createOnly = item.action === "write" && (item.local?.deleted ?? true);
      if (!createOnly && !(await diskMatches(workspace.root, item.path, item.local))) {
        changedOnDisk.push(item);
      } else if (item.action === "remove" || item.inline !== null) {
        // Inline content is written straight from the notification; the write checks it.
        ready.push({ ...item, createOnly });
      } else if (await this.#holdContent(item)) {
        // A fetch that fails with the connection throws: the position must not pass it.
        ready.push({ ...item, inline: null, createOnly });
      }
    });
    const made = await this.#makeChanges(ready);
    // Inline content that did not hash to its version's hash: fetched, then written.
    const fetched: ChangeToMake[] = [];
    await forEachLimited(made.corrupt, APPLY_CONCURRENCY, async (item) => {
      const { path, version: { hash } } = item;
      log("warn", "inline content does not match its hash; fetching it", { path, hash });
      const fetch = { ...item, inline: null }; // its bytes were checked already
      if (await this.#holdContent(fetch)) fetched.push(fetch);
    });
    changedOnDisk.push(...made.taken, ...(await this.#makeChanges(fetched)).taken);
    if (changedOnDisk.length > 0) await this.#applyAfterLocalChanges(changedOnDisk, attempt);
  }

  #decide(
    item: PendingVersion,
    local: Iteration | undefined,
    state: ReplicaPathState,
  ): ApplyAction {
    const { filter, tables, mode } = this.#replica;
    const { path, version } = item;
    return decideApply({
      version,
      local: local ?? { hash: "", mode: 0, deleted: true },
      state,
      // A local file or folder holding the path, still written back, holds it back too:
      // the master's version of it may replace the one there (released with it). So does
      // one answered whose release has not run yet: the master's answer is read at once,
      // its release waits its turn behind the notifications that came before it.
      pendingWriteBack: [path, ...ancestorsOf(path)].some((held) =>
        tables.journal.hasOpen(held) || this.#releasing.has(held)
      ),
      filtered: filter.toReplica.ignores(path) || filter.local.ignores(path),
      unresolvedConflict: mode === "local-sync" && tables.conflicts.hasUnresolved(path),
    });
  }

  /**
   * Writes and removes on disk, then remembers each version made as applied.
   *
   * @returns How many were made; the create-only writes that found something on disk
   * (left as it is: their versions are for the caller to weigh again); and the writes
   * whose inline content did not match its hash (nothing written: to fetch).
   */
  async #makeChanges(items: ChangeToMake[]): Promise<MadeChanges> {
    // Folders created first, shallowest first, then the rest: each level's paths are
    // unrelated (see `#followingNotifications`).
    const levels = byLevel(
      items,
      (item) =>
        item.action === "write" && isFolderMode(item.version.mode)
          ? pathDepth(item.path)
          : Infinity,
      "shallowest",
    );
    if (levels.length <= 1) return await this.#makeUnrelatedChanges(items);
    const out: MadeChanges = { made: 0, taken: [], corrupt: [] };
    for (const level of levels) {
      const made = await this.#makeUnrelatedChanges(level);
      out.made += made.made;
      out.taken.push(...made.taken);
      out.corrupt.push(...made.corrupt);
    }
    return out;
  }

  /** {@linkcode #makeChanges} for paths unrelated to each other: one batch of the workspace. */
  async #makeUnrelatedChanges(items: ChangeToMake[]): Promise<MadeChanges> {
    if (items.length === 0) return { made: 0, taken: [], corrupt: [] };
    const replica = this.#replica;
    // RACE: a local write to a recorded path, landing between the disk check and the
    // rename, is replaced; the window is short and the watcher still records the write's
    // event (while it is paused for a large catch-up, nothing does). Create-only writes
    // have no such window.
    const intent = replica.tables.intents.begin(items);
    const { failed } = await replica.workspace.applyChanges(
      items.map(({ path, action, version, inline, createOnly }) =>
        // A folder is removed only when empty: what is left in it (a filtered path, a
        // local file not written back yet) is never lost (PROTOCOL.md §8).
        action === "remove" ? { path, remove: true, onlyEmptyFolder: true } : {
          path,
          hash: version.hash,
          mode: version.mode,
          createOnly: createOnly ?? false,
          ...(inline ? { bytes: inline } : {}),
        }
      ),
      // A replica's files are copies: visible before their fsync (recorded after it).
      { origin: ORIGINS.master, visibleFirst: true },
    );
    const byPath = new Map(items.map((item) => [item.path, item]));
    const out: MadeChanges = { made: items.length - failed.length, taken: [], corrupt: [] };
    const problems = new Map<string, unknown>(); // changes that may have reached the disk
    for (const { path, error } of failed) {
      const item = byPath.get(path)!;
      byPath.delete(path);
      if (error instanceof FolderNotEmptyError) {
        // Kept with what it holds: the version is applied as far as it goes.
        log("info", "folder kept: it holds paths the master did not remove", { path });
        byPath.set(path, item);
      } else if (error instanceof Deno.errors.AlreadyExists || changedAbove(error)) {
        out.taken.push(item); // the disk changed under it: recorded, then weighed again
      } else if (error instanceof CorruptContentError && item.inline !== null) {
        out.corrupt.push(item);
      } else problems.set(path, error);
    }
    inTransaction(replica.store.db, () => {
      for (const item of byPath.values()) replica.tables.paths.setApplied(item.path, item.version);
      replica.tables.intents.end(intent, new Set(problems.keys())); // theirs stay noted
    });
    for (const [path, error] of problems) replica.noteProblem(path, errorMessage(error));
    return out;
  }

  /**
   * Some files changed on disk without being recorded yet: record them first (they are
   * then journaled and these versions deferred), never overwrite them unseen.
   */
  async #applyAfterLocalChanges(items: PendingVersion[], attempt: number): Promise<void> {
    const { workspace, store } = this.#replica;
    if (attempt >= 2) {
      for (const item of items) {
        this.#replica.noteProblem(item.path, "the file keeps changing on disk; left as it is");
      }
      return;
    }
    await workspace.settled();
    for (const item of items) {
      if (!(await diskMatches(workspace.root, item.path, store.latest(item.path)))) {
        await workspace.scan();
        break;
      }
    }
    await this.#applyVersions(items, attempt + 1);
  }

  /** Puts the content in the CAS (inline bytes verified, else fetched); `false` when unavailable. */
  async #holdContent(item: PendingVersion): Promise<boolean> {
    const { path, version: { hash }, inline } = item;
    if (inline !== null) {
      try {
        await this.#replica.cas.putVerified(hash, inline, { deferSync: true });
        return true;
      } catch (error) {
        if (!(error instanceof CorruptContentError)) throw error;
        log("warn", "inline content does not match its hash; fetching it", { path, hash });
      }
    }
    try {
      await this.#fetcher.ensure(hash);
      return true;
    } catch (error) {
      if (this.#closing || error instanceof TransportClosedError) {
        // Not this content's fault: the version waits for the next connection.
        this.#lostFetches.push(item);
        return false;
      }
      if (error instanceof ContentUnavailableError || error instanceof CorruptContentError) {
        this.#replica.noteProblem(path, error.message);
        return false;
      }
      throw error;
    }
  }

  #ack(): void {
    this.#sinceAck = 0;
    const replica = this.#replica;
    if (replica.applied <= this.#lastAcked) return;
    // Durable before acknowledged.
    replica.saveApplied();
    if (!this.#catchupSent) return; // acknowledged after the catch-up request
    this.#lastAcked = replica.applied;
    this.#sendAck();
  }

  /**
   * Sends the latest acknowledgement without waiting for it: applying must go on while
   * our sends wait (a relay that blocks on writes would otherwise stop both sides). One
   * Ack is in flight at a time; a newer position is sent once it is out.
   */
  #sendAck(): void {
    if (this.#ackInFlight) {
      this.#ackAgain = true;
      return;
    }
    this.#ackInFlight = true;
    this.#transport.send({ type: "Ack", up_to_sequence: BigInt(this.#lastAcked) })
      .catch(() => {})
      .finally(() => {
        this.#ackInFlight = false;
        if (this.#ackAgain) {
          this.#ackAgain = false;
          this.#sendAck();
        }
      });
  }

  /**
   * Keeps, for the next connection, the notifications this one received and did not
   * apply: the batch cut short by a lost fetch, then those still queued (see
   * `Replica.carried`). A resync starts over instead, and keeps nothing.
   */
  #carryOver(): void {
    const replica = this.#replica;
    if (this.#resync || replica.resyncPending || this.#applyFailed) return;
    const queued = this.#items.takeWhile((_item): _item is ApplyItem => true)
      .filter((item): item is NotificationMessage => item.type === "Notification");
    replica.carried = carriedNotifications(
      [...this.#carry, ...queued],
      replica.applied,
      MAX_CARRIED,
    );
  }

  /** Records the master's answers and queues what they release. */
  #resolved(entries: JournalEntry[]): void {
    const replica = this.#replica;
    const { paths, conflicts } = replica.tables;
    const release: { path: string; restore: boolean }[] = [];
    for (const entry of entries) {
      const touched = entry.newPath === null ? [entry.path] : [entry.path, entry.newPath];
      if (entry.state === "accepted") {
        for (const path of touched) {
          paths.setAccepted(path, entry.masterSeq ?? 0);
          this.#acceptedHere.add(path);
          release.push({ path, restore: false });
        }
        continue;
      }
      const reason = entry.reason ?? "rejected";
      const conflict = reasonWord(reason) === "conflict";
      if (conflict) metrics.conflicts.inc();
      const takeUpstream = replica.mode === "sandbox" && conflict;
      conflicts.add(entry, reason, takeUpstream ? "upstream" : null);
      log("warn", "write-back rejected", {
        path: entry.path,
        operation: entry.operation,
        reason,
        kept_hash: entry.hash,
      });
      if (replica.mode === "sandbox") {
        for (const path of touched) release.push({ path, restore: conflict });
      }
    }
    if (release.length === 0) return;
    for (const { path } of release) {
      this.#releasing.set(path, (this.#releasing.get(path) ?? 0) + 1);
    }
    this.#items.push({ type: "Release", paths: release });
  }
}

/**
 * Whether a write failed because a local change took its folder away meanwhile (removed,
 * or replaced by a file or a link, not recorded yet): not the version's problem.
 */
function changedAbove(error: unknown): boolean {
  return error instanceof PathError || isMissing(error);
}
