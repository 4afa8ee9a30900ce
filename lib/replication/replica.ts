import type { Cas } from "../cas/mod.ts";
import type { DirectionalFilter } from "../filter/mod.ts";
import { errorMessage, log } from "../log/mod.ts";
import type { Store } from "../store/mod.ts";
import type { Workspace } from "../workspace/mod.ts";
import type { Conflict } from "./conflict_log.ts";
import { type ConflictChoice, resolveConflict, type ResolveOutcome } from "./resolve_conflict.ts";
import { ReplicaCore } from "./replica_core.ts";
import { ReplicaSession } from "./replica_session.ts";
import { baseSilenceMs, nextSilenceMs, type ReplicaMode } from "./replica_state.ts";
import { type Connector, connectUnix, connectWebSocket, type Transport } from "./transports/mod.ts";
import type { JournalState } from "./write_journal.ts";

export type { ReplicaMode } from "./replica_state.ts";

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
  /**
   * Whether the content of master versions written to the workspace is kept in the CAS
   * too (see `ReplicaCoreOptions.keepMasterContent`). @default {mode === "local-sync"}
   */
  keepMasterContent?: boolean | undefined;
  /**
   * The master's heartbeat interval; a master silent for 5 of them (at least 3 s) is left and
   * reconnected, and each connection left so waits twice as long (up to 60 s; see
   * `nextSilenceMs`). @default {1000}
   */
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
  /** The master's sequence as last heard (a heartbeat, a barrier, or a notification received). */
  masterSequence: number;
  /** Local changes not yet answered by the master. */
  pendingWriteBacks: number;
  /** Journal entries per state. */
  journal: Record<JournalState, number>;
  /** Rejected write-backs, newest first: at most the newest 100 (see `conflictCount`). */
  conflicts: Conflict[];
  /** How many rejected write-backs there are in all, resolved or not. */
  conflictCount: number;
  /** How many of them are still open (left for a person to resolve). */
  openConflictCount: number;
  /**
   * Why the last attempt to connect failed (the master unreachable, or refusing this
   * replica: a wrong token, say), while not connected; `null` once a connection is made.
   */
  lastConnectionError: string | null;
  /**
   * Local changes refused here (too large) that no later change of their path superseded,
   * newest first.
   */
  refused: { path: string; size: number; reason: string; localSeq: number }[];
  /** How many there are in all (the list holds the newest 100). */
  openRefusedCount: number;
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

class Replica implements ReplicaHandle {
  readonly sandboxId: string;
  readonly core: ReplicaCore;
  readonly options: ReplicaOptions;
  readonly #connector: Connector;
  readonly #master: string;
  #session: ReplicaSession | null = null;
  #sessionWaiters: (() => void)[] = [];
  #connections = 0;
  #lastConnectionError: string | null = null;
  #closed = false;
  #wakeClosed!: () => void;
  readonly #closedSignal = new Promise<void>((resolve) => this.#wakeClosed = resolve);
  #loop: Promise<void> = Promise.resolve();

  constructor(options: ReplicaOptions) {
    this.options = options;
    this.core = new ReplicaCore(options);
    this.sandboxId = this.core.sandboxId;
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
    this.core.startJournaling();
    this.#loop = this.#connectLoop();
  }

  status(): ReplicaStatus {
    const { tables, mode, applied } = this.core;
    const counts = tables.journal.counts();
    const session = this.#session;
    const conflictCounts = tables.conflicts.counts();
    return {
      role: mode === "sandbox" ? "replica" : "local-sync",
      sandboxId: this.sandboxId,
      master: this.#master,
      connected: session !== null,
      state: this.#closed ? "closed" : session?.state ?? "connecting",
      appliedSequence: applied,
      masterSequence: Math.max(this.core.masterSequence, applied),
      pendingWriteBacks: counts.pending + counts.sent,
      journal: counts,
      conflicts: tables.conflicts.list({ limit: 100 }),
      conflictCount: conflictCounts.total,
      openConflictCount: conflictCounts.unresolved,
      lastConnectionError: this.#lastConnectionError,
      refused: tables.journal.refusals(100, true).map((entry) => ({
        path: entry.path,
        size: entry.size,
        reason: entry.reason ?? "",
        localSeq: entry.localSeq,
      })),
      openRefusedCount: tables.journal.openRefusalCount(),
      problems: [...this.core.problems],
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
      masterSequence: this.core.masterSequence,
      appliedSequence: this.core.applied,
    };
  }

  resolveConflict(path: string, keep: ConflictChoice): Promise<ResolveOutcome> {
    return resolveConflict(this.core, path, keep);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.core.stopJournaling();
    this.#wakeClosed();
    this.core.masterTier.close();
    this.#session?.close("replica shutting down");
    await this.#loop;
    this.core.saveApplied();
    await this.core.checkpoints.close(); // the store may outlive the replica too
    this.core.resumeWatching(); // the workspace may outlive the replica
  }

  async #connectLoop(): Promise<void> {
    const min = this.options.backoffMinMs ?? 100;
    const max = this.options.backoffMaxMs ?? 5000;
    let delay = min;
    let failures = 0;
    const baseSilence = baseSilenceMs(this.options.heartbeatMs ?? 1000);
    let silenceMs = baseSilence;
    while (!this.#closed) {
      let transport: Transport | null = null;
      try {
        transport = await this.#connector();
      } catch (error) {
        this.#lastConnectionError = errorMessage(error);
        if (failures++ === 0) {
          log("warn", "cannot reach the master; retrying", { master: this.#master, error });
        }
        this.core.resumeWatching(); // no catch-up to wait for: local changes matter again
      }
      if (transport && this.#closed) {
        transport.close(); // closed while connecting: no session may start
        break;
      }
      if (transport) {
        failures = 0;
        this.#lastConnectionError = null;
        this.#connections++;
        const session = new ReplicaSession(this.core, transport, { silenceMs });
        this.#session = session;
        for (const wake of this.#sessionWaiters.splice(0)) wake();
        const outcome = await session.run();
        this.#session = null;
        if (this.#closed) break;
        const nextSilence = nextSilenceMs(silenceMs, baseSilence, outcome);
        log("warn", "disconnected from the master; reconnecting", {
          master: this.#master,
          reason: outcome.reason,
          ...(nextSilence > silenceMs ? { silence_tolerated_next_ms: nextSilence } : {}),
        });
        silenceMs = nextSilence;
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
