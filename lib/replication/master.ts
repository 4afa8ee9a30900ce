import type { Cas } from "../cas/mod.ts";
import type { Clock } from "../concurrency/mod.ts";
import { isLoopback, parseHostPort } from "../config/mod.ts";
import {
  type AccessCheck,
  accessPolicy,
  ByteBudget,
  ConnectionLimits,
  defaultMaxConnections,
} from "../net/mod.ts";
import type { DirectionalFilter } from "../filter/mod.ts";
import { log } from "../log/mod.ts";
import type { Iteration, Store } from "../store/mod.ts";
import type { Workspace } from "../workspace/mod.ts";
import { MAX_FRAME_PAYLOAD } from "../wire/mod.ts";
import { MasterState } from "./master_state.ts";
import { type MasterConflict, MasterConflicts } from "./master_conflicts.ts";
import { NotificationSource } from "./notification_source.ts";
import { answerContentFetch } from "./content_answer.ts";
import { RowReadAhead } from "./row_read_ahead.ts";
import { FetchScheduler } from "./fetch_scheduler.ts";
import { orderedMap } from "./_ordered_map.ts";
import { MasterSession } from "./master_session.ts";
import {
  listenUnix,
  listenWebSocket,
  type Transport,
  type TransportServer,
} from "./transports/mod.ts";
import { WriteBackApplier } from "./writeback_applier.ts";

/**
 * Store meta key holding the oldest sequence the master can still replay after; a
 * history pruner sets it. Catch-up from below it needs a full resync. Absent means 0.
 */
export const HISTORY_FLOOR_META = "history_floor";

/** Options for {@linkcode startMaster}. */
export interface MasterOptions {
  /** The master's workspace; write-backs are applied through it. */
  workspace: Workspace;
  /** The master's store. @default {workspace.store} */
  store?: Store;
  /** The master's CAS. @default {workspace.cas} */
  cas?: Cas;
  /** Directional filters. @default {workspace.filter} */
  filter?: DirectionalFilter;
  /** Unix socket to listen on (created with mode 0600). */
  socketPath?: string | undefined;
  /** `HOST:PORT` for the WebSocket listener. */
  wsListen?: string | undefined;
  /** Bearer token WebSocket clients must present; required on non-loopback addresses. */
  token?: string | undefined;
  /** Allow a non-loopback WebSocket listener without a token. @default {false} */
  insecure?: boolean;
  /** Milliseconds between heartbeats. @default {1000} */
  heartbeatMs?: number;
  /** A name for this workspace in logs and status. */
  agentId?: string | undefined;
  /** Largest content a write-back may carry. @default {67108864} */
  maxWritebackBytes?: number;
  /** Permission bits a write-back may set; others are cleared. @default {0o777} */
  writebackModeBits?: number;
  /** Per-replica queue bound in notifications; past it the queue is dropped and replay repairs. @default {10000} */
  maxQueueItems?: number;
  /** Per-replica queue bound in bytes. @default {33554432} */
  maxQueueBytes?: number;
  /** Milliseconds a barrier waits for a sequence the master has not reached. @default {30000} */
  barrierTimeoutMs?: number;
  /**
   * Notifications sent to a replica beyond its last `Ack` before the master waits for one
   * (PROTOCOL.md §3). @default {4096}
   */
  windowItems?: number;
  /** Notification bytes sent to a replica beyond its last `Ack`. @default {16777216} */
  windowBytes?: number;
  /**
   * Who may connect over WebSocket, decided by the daemon from its configuration.
   * @default {the token if one is given (header or `?token=`), and a loopback listener refuses foreign `Host`s}
   */
  access?: AccessCheck | undefined;
  /** Connections of the whole process, shared with its other listeners. @default {its own} */
  limits?: ConnectionLimits | undefined;
  /** Connections each replication listener keeps open at once. @default {the process's maximum} */
  maxConnections?: number | undefined;
  /**
   * Milliseconds a new connection has to complete its WebSocket upgrade and send its first
   * message; past it the connection is closed.
   * @default {10000}
   */
  handshakeTimeoutMs?: number | undefined;
  /** Bytes of frames not yet complete, per connection and over all. @default {a frame, 128 MiB} */
  maxPartialFrameBytes?: number | undefined;
  /** Content fetches one connection may have outstanding. @default {256} */
  maxQueuedFetches?: number | undefined;
  /**
   * The time and timers of every session: handshake timeouts, heartbeats, barrier deadlines
   * (a test advances its own). @default {SYSTEM_CLOCK}
   */
  clock?: Clock | undefined;
}

/** One replica as the master's status shows it. */
export interface ReplicaSummary {
  /** Its identity. */
  sandboxId: string;
  /** Whether it is connected now. */
  connected: boolean;
  /** The highest sequence it acknowledged. */
  ackedSequence: number;
  /** The master's sequence minus the acknowledged one. */
  lag: number;
  /** Where it connects from. */
  remote: string;
  /** Epoch ms of its last message. */
  lastSeenMs: number;
  /** How its channel is sending (`idle`, `replay`, `live`) while connected. */
  mode?: string;
  /** Notifications queued for it while connected. */
  queued?: number;
  /** Times its queue overflowed and was repaired by replay, this connection. */
  overflows?: number;
}

/** What {@linkcode MasterHandle.status} reports. */
export interface MasterStatus {
  /** Always `"master"`. */
  role: "master";
  /** The configured agent id, if any. */
  agentId: string | null;
  /** The master's sequence. */
  sequence: number;
  /** The Unix socket, if listening on one. */
  socketPath: string | null;
  /** The WebSocket listener's `HOST:PORT`, if any. */
  wsAddress: string | null;
  /** Every replica ever seen, connected ones first. */
  replicas: ReplicaSummary[];
}

/** A running master. */
export interface MasterHandle {
  /** The WebSocket listener's bound port, when listening (useful with port 0). */
  readonly wsPort: number | null;
  /** Current replicas and their acknowledged sequences. */
  status(): MasterStatus;
  /** Write-backs this master rejected, newest first, with the content it kept. */
  conflicts(): MasterConflict[];
  /** Stops listening, disconnects every replica and waits for work in progress. */
  close(): Promise<void>;
}

/**
 * Starts the replication master (docs/PROTOCOL.md §3–§6): listens on a Unix socket and/or
 * a WebSocket, pushes a notification for every new iteration to each replica, serves
 * content from the CAS, answers catch-up, barrier and write-back requests, and records
 * each replica's acknowledged sequence.
 *
 * @param options See {@linkcode MasterOptions}.
 * @returns The running master.
 * @throws {TypeError} For a bad `wsListen`, or a non-loopback one without a token.
 * @throws {Deno.errors.AddrInUse} When another process listens on the socket.
 *
 * @example Starting and stopping
 * ```ts ignore
 * const workspace = await Workspace.open({ root: "/work/ws" });
 * const master = await startMaster({ workspace, socketPath: "/work/ws/.chronicle/chronicle.sock" });
 * console.log(master.status().replicas);
 * await master.close();
 * ```
 */
export async function startMaster(options: MasterOptions): Promise<MasterHandle> {
  const master = new Master(options);
  try {
    await master.listen();
  } catch (error) {
    await master.close();
    throw error;
  }
  return master;
}

/** Fetch answers prepared at once over every replica (each holds its content in memory). */
const FETCH_CONCURRENCY = 4;
/** Fetches queued over every connection before an asking one is closed. */
const FETCH_QUEUE_TOTAL = 4096;
/** Answer bytes prepared and not yet sent, per connection and in all. */
const FETCH_SEND_BYTES_PER_CONNECTION = 64 * 1024 * 1024;
const FETCH_SEND_BYTES_TOTAL = 256 * 1024 * 1024;
/** Default budget of partial-frame bytes over every connection. */
const PARTIAL_FRAME_BYTES_TOTAL = 128 * 1024 * 1024;
/**
 * Paths a replay reads from the store at a time: a replica syncing 100,000 paths then
 * holds the master's records of a page, not of the whole tree (issue #17, memory).
 */
const REPLAY_PAGE = 1024;
/** Notifications built at once for a batch of new iterations. */
const BUILD_CONCURRENCY = 16;

class Master implements MasterHandle {
  readonly #options: MasterOptions;
  readonly #store: Store;
  readonly #cas: Cas;
  readonly #state: MasterState;
  readonly #source: NotificationSource;
  readonly #applier: WriteBackApplier;
  /** Every connected session, with its run's end. */
  readonly #sessions = new Map<MasterSession, Promise<void>>();
  readonly #servers: TransportServer[] = [];
  readonly #unsubscribe: () => void;
  readonly #fetches: FetchScheduler;
  #publishing: Promise<void> = Promise.resolve();
  #wsAddress: string | null = null;
  wsPort: number | null = null;
  #closed = false;

  constructor(options: MasterOptions) {
    this.#options = options;
    const workspace = options.workspace;
    this.#store = options.store ?? workspace.store;
    this.#cas = options.cas ?? workspace.cas;
    const filter = options.filter ?? workspace.filter;
    this.#state = new MasterState(this.#store.db);
    this.#source = new NotificationSource(this.#cas, filter.toReplica);
    this.#applier = new WriteBackApplier({
      workspace,
      store: this.#store,
      cas: this.#cas,
      filter,
      state: this.#state,
      maxContentBytes: options.maxWritebackBytes,
      allowedModeBits: options.writebackModeBits,
    });
    this.#unsubscribe = this.#store.onRecorded((recorded) => this.#publish(recorded));
    const readAhead = new RowReadAhead(this.#cas);
    this.#fetches = new FetchScheduler({
      answer: (hash, maxPayload, next) =>
        answerContentFetch(
          this.#cas,
          hash,
          maxPayload,
          (wanted, maxBytes) => readAhead.take(wanted, next, maxBytes),
        ),
      concurrency: FETCH_CONCURRENCY,
      maxTotal: FETCH_QUEUE_TOTAL,
      maxPerConnection: options.maxQueuedFetches,
      sendBudget: new ByteBudget({
        perHolder: FETCH_SEND_BYTES_PER_CONNECTION,
        total: FETCH_SEND_BYTES_TOTAL,
      }),
    });
  }

  async listen(): Promise<void> {
    const onTransport = (transport: Transport) => this.#accept(transport);
    const options = this.#options;
    const limits = options.limits ?? new ConnectionLimits({ maxTotal: defaultMaxConnections() });
    const perListener = options.maxConnections ?? limits.maxTotal;
    const budget = new ByteBudget({
      perHolder: MAX_FRAME_PAYLOAD + 4,
      total: options.maxPartialFrameBytes ?? PARTIAL_FRAME_BYTES_TOTAL,
    });
    const onRefused = (remote: string, reason: string) =>
      log("warn", "replica refused", { remote, reason });
    if (this.#options.socketPath) {
      const server = await listenUnix({
        path: this.#options.socketPath,
        onTransport,
        limit: limits.listener(perListener),
        budget,
        onRefused,
      });
      this.#servers.push(server);
      log("info", "replication listening", { socket: server.address });
    }
    if (this.#options.wsListen) {
      const { hostname, port } = parseHostPort(this.#options.wsListen);
      const token = options.token || undefined;
      if (!options.access && !token && !options.insecure && !isLoopback(hostname)) {
        throw new TypeError(
          `Refusing to listen on non-loopback address "${hostname}" without a token (give --token or CHRONICLE_TOKEN, or --insecure)`,
        );
      }
      const server = await listenWebSocket({
        hostname,
        port,
        access: options.access ?? accessPolicy({
          token,
          tokenForAll: token !== undefined,
          tokenInQuery: true,
          loopback: isLoopback(hostname),
        }),
        limit: limits.listener(perListener),
        handshakeTimeoutMs: options.handshakeTimeoutMs,
        partialBudget: budget,
        onTransport,
        onRefused,
      });
      this.#servers.push(server);
      this.#wsAddress = server.address;
      this.wsPort = server.port ?? null;
      log("info", "replication listening", { websocket: server.address });
    }
  }

  conflicts(): MasterConflict[] {
    return new MasterConflicts(this.#store.db).list();
  }

  status(): MasterStatus {
    const sequence = this.#store.sequence();
    const live = new Map<string, MasterSession>();
    for (const session of this.#sessions.keys()) {
      if (session.sandboxId) live.set(session.sandboxId, session);
    }
    const replicas = this.#state.replicas().map((record): ReplicaSummary => {
      const session = live.get(record.sandboxId);
      const acked = Math.max(record.ackedSequence, session?.acked ?? 0);
      return {
        sandboxId: record.sandboxId,
        connected: session !== undefined,
        ackedSequence: acked,
        lag: Math.max(0, sequence - acked),
        remote: record.remote,
        lastSeenMs: record.lastSeenMs,
        ...(session
          ? {
            mode: session.channel.mode,
            queued: session.channel.queued,
            overflows: session.channel.overflows,
          }
          : {}),
      };
    });
    replicas.sort((a, b) => Number(b.connected) - Number(a.connected));
    return {
      role: "master",
      agentId: this.#options.agentId ?? null,
      sequence,
      socketPath: this.#options.socketPath ?? null,
      wsAddress: this.#wsAddress,
      replicas,
    };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#unsubscribe();
    await Promise.all(this.#servers.map((server) => server.close()));
    for (const session of this.#sessions.keys()) session.close("master shutting down");
    await Promise.all(this.#sessions.values());
    await this.#publishing;
    await this.#applier.close();
  }

  #accept(transport: Transport): void {
    if (this.#closed) {
      transport.close();
      return;
    }
    const options = this.#options;
    const store = this.#store;
    const source = this.#source;
    const session = new MasterSession({
      transport,
      replay: {
        latestSince: (sequence) => {
          const page = store.latestSince(sequence, { limit: REPLAY_PAGE });
          source.prefetch(page);
          return page;
        },
        sequence: () => store.sequence(),
        frame: (iteration) => source.frame(iteration),
      },
      fetches: this.#fetches,
      position: () => ({ current: store.sequence(), floor: this.#catchupFloor() }),
      identified: (session, sandboxId) => this.#register(session, sandboxId),
      recordAck: (sandboxId, sequence) => this.#state.recordAck(sandboxId, sequence),
      applyWriteBack: (sandboxId, entries) => this.#applier.apply(sandboxId, entries),
      heartbeatMs: options.heartbeatMs,
      handshakeTimeoutMs: options.handshakeTimeoutMs,
      maxQueueItems: options.maxQueueItems,
      maxQueueBytes: options.maxQueueBytes,
      barrierTimeoutMs: options.barrierTimeoutMs,
      windowItems: options.windowItems,
      windowBytes: options.windowBytes,
      clock: options.clock,
    });
    log("info", "replica connected", { remote: transport.remote });
    this.#sessions.set(session, session.run().finally(() => this.#sessions.delete(session)));
  }

  /** Builds each new iteration's notification once and offers it to every live channel. */
  #publish(recorded: Iteration[]): void {
    this.#publishing = this.#publishing.then(async () => {
      // A channel not live now replays from the store, which already holds these.
      const sessions = [...this.#sessions.keys()];
      if (!sessions.some((session) => session.channel.mode === "live")) return;
      this.#source.prefetch(recorded);
      const items = orderedMap(recorded, BUILD_CONCURRENCY, async (iteration) => ({
        sequence: iteration.sequence,
        frame: await this.#source.frame(iteration),
      }));
      for await (const item of items) {
        for (const session of this.#sessions.keys()) session.channel.offer(item);
      }
    }).catch((error) => log("error", "publishing notifications failed", { error }));
  }

  /** Notes a replica's identity, closing an older connection of the same sandbox id. */
  #register(session: MasterSession, sandboxId: string): void {
    for (const other of this.#sessions.keys()) {
      if (other !== session && other.sandboxId === sandboxId) {
        other.close("replaced by a newer connection of the same sandbox id");
      }
    }
    this.#state.touch(sandboxId, session.transport.remote);
  }

  #catchupFloor(): number {
    return Number(this.#store.getMeta(HISTORY_FLOOR_META) ?? "0") || 0;
  }
}
