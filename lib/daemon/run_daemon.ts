import { ProcessLock } from "./process_lock.ts";
import { type ChronicleConfig, describeConfig, isLoopback, parseHostPort } from "../config/mod.ts";
import { accessPolicy, ConnectionLimits, type Routes, serveHttp } from "../net/mod.ts";
import {
  contentRoutes,
  createApp,
  eventsRoutes,
  filesRoutes,
  restoreRoutes,
  snapshotRoutes,
} from "../http/mod.ts";
import { configureLogging, errorMessage, log } from "../log/mod.ts";
import { mcpRoutes } from "../mcp/mod.ts";
import { keepHeapSmall } from "../memory/mod.ts";
import { defaultRegistry, metrics, metricsRoutes } from "../metrics/mod.ts";
import {
  keptConflictHashes,
  type MasterHandle,
  type MasterStatus,
  type MasterVersion,
  ReplicaPaths,
  type ReplicaStatus,
  startMaster,
  startReplica,
} from "../replication/mod.ts";
import { type ContentOwner, openWorkspaceSnapshots, type Snapshots } from "../snapshot/mod.ts";
import { EDITOR_NOISE_PATTERNS } from "../localsync/mod.ts";
import { WORKSPACE_ROOT_META } from "../store/mod.ts";
import { Workspace } from "../workspace/mod.ts";
import { type ObjectStoreService, startObjectStore } from "../objectstore/mod.ts";
import { uiApiRoutes, uiControlRoutes, uiListener, uiStaticRoutes } from "../ui/mod.ts";
import { opsRoutes } from "./ops_routes.ts";
import { type ReplicationHandle, replicationRoutes } from "./replication_routes.ts";
import { serveUnix } from "./serve_unix.ts";
import { VERSION } from "./version.ts";

/** How often the daemon looks for iterations other processes recorded. */
const EXTERNAL_POLL_MS = 200;
/** Longest a graceful shutdown may take before the process exits anyway. */
const SHUTDOWN_DEADLINE_MS = 10_000;

/** The role a running Chronicle plays, shown by `/health` and `status`. */
export type DaemonRole = "standalone" | "master" | "replica" | "local-sync";

/** Something the daemon started and must stop on shutdown. */
interface Service {
  name: string;
  close(): Promise<void>;
}

/** The role the configuration asks for. */
export function roleOf(config: ChronicleConfig): DaemonRole {
  if (config.connect || config.wsConnect) return config.localSync ? "local-sync" : "replica";
  return config.replication || config.wsListen ? "master" : "standalone";
}

/**
 * Runs Chronicle on a workspace until SIGINT or SIGTERM: initial scan, then watching;
 * REST on the control socket (and `--http`); then a graceful shutdown that stops
 * accepting work, finishes queued captures and closes the database.
 *
 * @returns The process exit code.
 */
export async function runDaemon(config: ChronicleConfig): Promise<number> {
  configureLogging({ format: config.logFormat, quiet: config.quiet });
  const role = roleOf(config);
  const localSync = role === "local-sync";
  const workspace = await Workspace.open({
    root: config.workspace,
    dataDir: config.dataDir,
    database: config.database,
    casDir: config.casDir,
    ignore: localSync ? [...EDITOR_NOISE_PATTERNS, ...config.ignore] : config.ignore,
  });
  try {
    ProcessLock.acquire(workspace.layout.dataDir);
  } catch (error) {
    await workspace.close();
    throw error;
  }
  const leftBehind = await workspace.cas.claimTempFiles(workspace.layout.dataDir);
  if (leftBehind > 0) {
    log("info", "removed the temp files an earlier run left when it was stopped mid-write", {
      count: leftBehind,
    });
  }
  workspace.store.setMeta(WORKSPACE_ROOT_META, workspace.root);
  workspace.store.setMeta("role", role);
  workspace.store.onRecorded((recorded) => metrics.iterations.inc(recorded.length));
  const snapshots = openWorkspaceSnapshots(workspace, {
    config: config.snapshots,
    offTheRecord: config.noSnapshots,
  });
  const services: Service[] = [];
  const objectStore = openObjectStore(config, workspace);
  if (objectStore !== null) {
    workspace.store.onRecorded((recorded) => objectStore.notice(recorded));
  }
  let ready = false;
  let replication: ReplicationHandle = { kind: "none" };
  const shutdown = shutdownSignal();
  /** 1 once the daemon stops because its workspace was removed under it. */
  let exitCode = 0;
  // Ends every GET /events stream at shutdown, so the servers do not wait on them.
  const events = new AbortController();
  const startedMs = Date.now();
  // Gauges that describe the store are read when scraped, not kept up to date.
  const removeCollector = defaultRegistry.addCollector(() => {
    metrics.sequence.set(workspace.store.sequence());
    metrics.bytesStored.set(workspace.store.stats().bytes);
    if (replication.kind === "master") recordReplicaMetrics(replication.master);
    if (objectStore !== null) recordObjectStoreMetrics(objectStore);
  });
  const statusOf = () => {
    // One status() per request: a replica's or master's status is not cheap.
    const state = replicationState(replication);
    return {
      running: true,
      pid: Deno.pid,
      started_ms: startedMs,
      role,
      version: VERSION,
      workspace: workspace.root,
      agent_id: config.agentId ?? null,
      sequence: workspace.store.sequence(),
      ready: ready && state.live,
      ...workspace.store.stats(),
      replication: state.status,
      object_store: objectStore?.status() ?? null,
    };
  };
  // The replica's view of the master's versions (its tables are made when it starts).
  const replicaPaths = new ReplicaPaths(workspace.store.db);
  const heapKeeper = keepHeapSmall({ onCollected: countCollection });
  // Shown on /metrics: a custom compile without --expose-gc runs without it.
  metrics.heapKeeperRunning.set(heapKeeper ? 1 : 0);
  try {
    const routes: Routes[] = [
      opsRoutes({
        role,
        sequence: () => workspace.store.sequence(),
        ready: () => ready && replicaLive(replication),
        waitingFor: () => ready ? replicaWaiting(replication) : "the first scan of the workspace",
        degraded: () => objectStore?.degraded() ?? [],
        shutdown: () => shutdown.request("POST /shutdown"),
        // What `chronicle config` shows of a running process: its own view, secrets masked.
        config: () => describeConfig(config),
        status: () => statusOf(),
      }),
      metricsRoutes(),
      filesRoutes(workspace),
      contentRoutes(workspace),
      eventsRoutes(workspace.store, { signal: events.signal }),
      restoreRoutes(workspace, snapshots),
      snapshotRoutes({ snapshots }),
      replicationRoutes(() => replication),
      mcpRoutes({
        workspace,
        snapshots,
        status: () => statusOf(),
        syncWait: (timeoutMs) =>
          replication.kind === "replica" ? replication.replica.syncWait(timeoutMs) : undefined,
      }, { version: VERSION }),
      uiStaticRoutes(),
      uiApiRoutes({
        workspace,
        snapshots,
        masterVersion: (path) =>
          replication.kind === "replica" ? knownMasterVersion(replicaPaths, path) : null,
      }),
    ];
    // One count of connections over every listener, so no flood exhausts the descriptors.
    const limits = new ConnectionLimits({ maxTotal: config.maxConnections });
    // `chronicle ui` opens a loopback listener with a token of its own, on request.
    const ui = uiListener((token) => createApp({ token, trustedCaller: false, routes }).fetch, {
      limit: limits.listener(config.maxListenerConnections),
      handshakeTimeoutMs: config.handshakeTimeoutMs,
      idleTimeoutMs: config.idleTimeoutMs,
    });
    services.push({ name: "ui listener", close: () => ui.close() });
    services.push(
      ...await startServers(config, workspace.layout.controlSocket, routes, limits, [
        uiControlRoutes(ui),
      ]),
    );
    // The watches first, then one scan: what changes after a folder's walk is reported,
    // and the tree is walked once at start (the watcher's own scan at start is left out).
    // Local-sync waits out an editor's whole save; elsewhere a closed file is recorded at once.
    await workspace.watch({
      debounceMs: config.debounceMs,
      captureOnClose: !localSync,
      scanAtStart: false,
    });
    const scan = await workspace.scan({ keepRecorded: false });
    log("info", "initial scan done", {
      workspace: workspace.root,
      recorded: scan.recordedCount,
      problems: scan.problems.length,
      sequence: workspace.store.sequence(),
    });
    replication = await startReplication(config, role, workspace, limits);
    if (replication.kind !== "none") {
      services.push({
        name: "replication",
        close: () => closeReplication(replication),
      });
    }
    const poll = setInterval(() => {
      // Removed under it (`rm -rf` of the folder): the daemon stops rather than run on a
      // database nobody can reach, its control socket gone with it (captures record nothing
      // meanwhile: `WorkspaceGoneError`).
      const gone = workspace.gone();
      if (gone !== null && exitCode === 0) {
        exitCode = 1;
        log("error", `${gone} while Chronicle ran; stopping`, {
          hint: "nothing more is recorded, sent or written back; start Chronicle again on a " +
            "folder that exists (a replica takes the master's versions again)",
        });
        shutdown.request("workspace removed");
        return;
      }
      workspace.store.pollExternal();
    }, EXTERNAL_POLL_MS);
    services.push({ name: "external poll", close: () => Promise.resolve(clearInterval(poll)) });
    ready = true;
    void sweepOrphans(workspace, snapshots);
    log("info", "chronicle running", {
      role,
      version: VERSION,
      sequence: workspace.store.sequence(),
    });
    const signal = await shutdown.received;
    log("info", "shutting down", { signal });
    // Scale to zero: a stopped instance leaves its latest checkpoint in the bucket.
    await objectStore?.stop(config.checkpointInterval !== undefined);
  } finally {
    heapKeeper?.stop();
    metrics.heapKeeperRunning.set(0);
    events.abort();
    shutdown.dispose();
    removeCollector();
    await objectStore?.stop(false);
    await closeAll(services, workspace);
    // The process lock is not released here: held until the process ends, it tells
    // `chronicle stop` the process is gone, not about to go.
  }
  return exitCode;
}

/** One collection of the heap keeper, counted in the metrics. */
function countCollection(ms: number): void {
  metrics.heapCollections.inc();
  metrics.heapCollectionSeconds.inc(ms / 1000);
}

async function startServers(
  config: ChronicleConfig,
  controlPath: string,
  routes: Routes[],
  limits: ConnectionLimits,
  controlOnly: Routes[] = [],
): Promise<Service[]> {
  const services: Service[] = [];
  const timeouts = {
    handshakeTimeoutMs: config.handshakeTimeoutMs,
    idleTimeoutMs: config.idleTimeoutMs,
  };
  const control = await serveUnix(
    controlPath,
    createApp({ token: config.token, trustedCaller: true, routes: [...controlOnly, ...routes] })
      .fetch,
    { limit: limits.listener(config.maxListenerConnections), ...timeouts },
  );
  services.push({
    name: "control socket",
    close: async () => {
      await control.close();
      await Deno.remove(controlPath).catch(() => undefined);
    },
  });
  if (config.http) {
    // resolveConfig has already refused a non-loopback address without a token.
    const { hostname, port } = parseHostPort(config.http);
    const app = createApp({ token: config.token, trustedCaller: false, routes });
    const loopback = isLoopback(hostname);
    const server = await listenNamed("--http", config.http, () =>
      serveHttp({
        address: { hostname, port },
        fetch: app.fetch,
        // Loopback: reads are open to this machine, but only under a loopback Host (a web
        // page's DNS rebinding names its own). Elsewhere every request needs the token,
        // except the liveness probes.
        access: accessPolicy({
          token: config.token,
          loopback,
          tokenForAll: !loopback,
          open: (request) =>
            request.method === "GET" && /^\/(health|ready)(\?|$)/.test(request.target),
        }),
        limit: limits.listener(config.maxListenerConnections),
        ...timeouts,
        onRefused: (remote, reason) => log("warn", "HTTP request refused", { remote, reason }),
      }));
    // The bound port, not the asked one: with port 0 this is how a caller learns it.
    log("info", "REST API listening", { http: config.http, port: server.port });
    services.push({ name: "http", close: () => server.close() });
  }
  return services;
}

/**
 * Runs `listen`, and names the option when the OS refuses its address ("Address already in
 * use (os error 98)" alone does not say which of the listeners it was).
 */
function listenNamed<T>(flag: string, address: string | undefined, listen: () => T): T {
  const named = (error: unknown) => {
    if (address === undefined || !/\(os error \d+\)/.test(errorMessage(error))) return error;
    const why = error instanceof Deno.errors.AddrInUse
      ? "another process listens there; stop it or choose another port"
      : errorMessage(error);
    return new Error(`Cannot listen on ${flag} ${address}: ${why}`, { cause: error });
  };
  try {
    const result = listen();
    return (result instanceof Promise
      ? result.catch((error) => Promise.reject(named(error)))
      : result) as T;
  } catch (error) {
    throw named(error);
  }
}

/** Starts the master or replica the configuration asks for. */
async function startReplication(
  config: ChronicleConfig,
  role: DaemonRole,
  workspace: Workspace,
  limits: ConnectionLimits,
): Promise<ReplicationHandle> {
  const common = {
    workspace,
    token: config.token,
    heartbeatMs: config.heartbeatMs,
    maxWritebackBytes: config.maxWritebackBytes,
  };
  if (role === "master") {
    const master = await listenNamed("--ws-listen", config.wsListen, () =>
      startMaster({
        ...common,
        socketPath: config.socket,
        wsListen: config.wsListen,
        insecure: config.insecure,
        agentId: config.agentId,
        access: config.wsListen ? webSocketAccess(config, config.wsListen) : undefined,
        limits,
        maxConnections: config.maxListenerConnections,
        handshakeTimeoutMs: config.handshakeTimeoutMs,
        maxPartialFrameBytes: config.maxPartialFrameBytes,
        maxQueuedFetches: config.maxQueuedFetches,
        writebackModeBits: config.writebackModeBits,
      }));
    log("info", "replication master listening", {
      socket: config.socket,
      ws: config.wsListen ?? null,
    });
    return { kind: "master", master };
  }
  if (role === "replica" || role === "local-sync") {
    const replica = await startReplica({
      ...common,
      connect: config.connect,
      wsConnect: config.wsConnect,
      sandboxId: config.sandboxId,
      mode: role === "local-sync" ? "local-sync" : "sandbox",
      // The bucket is this replica's tier (and what it uploads must be here): it keeps a
      // copy of everything, as a master does.
      ...(config.objectStore === undefined ? {} : { keepMasterContent: true }),
    });
    return { kind: "replica", replica };
  }
  return { kind: "none" };
}

/** Who may open a replication WebSocket: the token when one is set; a loopback `Host` on loopback. */
function webSocketAccess(config: ChronicleConfig, address: string) {
  const token = config.token || undefined;
  return accessPolicy({
    token,
    tokenForAll: token !== undefined,
    tokenInQuery: true,
    loopback: isLoopback(parseHostPort(address).hostname),
  });
}

function closeReplication(replication: ReplicationHandle): Promise<void> {
  if (replication.kind === "master") return replication.master.close();
  if (replication.kind === "replica") return replication.replica.close();
  return Promise.resolve();
}

/** A replica is ready once it has caught up with its master; other roles at once. */
function replicaLive(replication: ReplicationHandle): boolean {
  return replication.kind !== "replica" || replication.replica.status().state === "live";
}

/** What a replica's readiness waits for, for people; `null` once it is live (or no replica). */
function replicaWaiting(replication: ReplicationHandle): string | null {
  if (replication.kind !== "replica") return null;
  const status = replication.replica.status();
  if (status.state === "live") return null;
  if (!status.connected) {
    const last = status.lastConnectionError;
    return `a connection to the master at ${status.master}${
      last ? ` (last attempt: ${last})` : ""
    }`;
  }
  return `the catch-up with the master (applied ${status.appliedSequence} of ${status.masterSequence})`;
}

/** The replication status `/status` shows, and whether it makes the daemon ready. */
function replicationState(
  replication: ReplicationHandle,
): { live: boolean; status: MasterStatus | ReplicaStatus | null } {
  if (replication.kind === "master") return { live: true, status: replication.master.status() };
  if (replication.kind === "replica") {
    const status = replication.replica.status();
    return { live: status.state === "live", status };
  }
  return { live: true, status: null };
}

/** Starts the object-store tier when one is configured. */
function openObjectStore(config: ChronicleConfig, workspace: Workspace): ObjectStoreService | null {
  if (config.objectStore === undefined) return null;
  const service = startObjectStore({
    location: config.objectStore,
    endpoint: config.s3Endpoint,
    region: config.s3Region,
    pathStyle: config.s3PathStyle,
    env: Deno.env.toObject(),
    db: workspace.store.db,
    database: config.database,
    cas: workspace.cas,
    casDir: config.casDir,
    checkpointIntervalMs: config.checkpointInterval,
    checkpointKeep: config.checkpointKeep,
    cacheLimitBytes: config.cacheLimit,
  });
  log("info", "object store tier on", { location: service.status().location });
  return service;
}

function recordObjectStoreMetrics(objectStore: ObjectStoreService): void {
  const { uploads } = objectStore.status();
  metrics.objectStoreQueuedObjects.set(uploads.queuedObjects);
  metrics.objectStoreQueuedBytes.set(uploads.queuedBytes);
  // Counters: the uploader's running totals, added as what they grew by since the last look.
  metrics.objectStoreUploadedBytes.raiseTo(uploads.uploadedBytes);
  metrics.objectStoreFailures.raiseTo(uploads.failures);
  metrics.objectStoreRate.set(uploads.bytesPerSecond);
}

/** The master's version of `path` a replica holds back behind a conflict, else the one it applied. */
function knownMasterVersion(paths: ReplicaPaths, path: string): MasterVersion | null {
  const state = paths.get(path);
  return state.deferred ?? (state.applied.sequence > 0 ? state.applied : null);
}

function recordReplicaMetrics(master: MasterHandle): void {
  const replicas = master.status().replicas;
  metrics.replicasConnected.set(replicas.filter((replica) => replica.connected).length);
  for (const replica of replicas) {
    metrics.replicaLag.set({ sandbox_id: replica.sandboxId }, replica.lag);
  }
}

/** Removes CAS objects nothing references (left by a crash between capture and record). */
async function sweepOrphans(workspace: Workspace, snapshots: Snapshots): Promise<void> {
  try {
    // Content a master keeps for rejected write-backs is referenced too.
    const owner: ContentOwner = {
      addHashesTo: (hashes) => {
        workspace.store.addHashesTo(hashes);
        for (const hash of keptConflictHashes(workspace.store.db)) hashes.add(hash);
      },
    };
    const swept = await snapshots.cleanOrphans(owner);
    if (swept.removedObjects > 0) log("info", "removed orphaned content", swept);
  } catch (error) {
    log("warn", "orphan sweep failed", { error });
  }
}

/** Stops services newest first, then the workspace, within a deadline. */
async function closeAll(services: Service[], workspace: Workspace): Promise<void> {
  const work = (async () => {
    for (const service of services.reverse()) {
      await service.close().catch((error) =>
        log("warn", "close failed", { service: service.name, error })
      );
    }
    await workspace.close();
  })();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      log("error", "shutdown deadline passed; exiting", { deadline_ms: SHUTDOWN_DEADLINE_MS });
      resolve();
    }, SHUTDOWN_DEADLINE_MS);
  });
  await Promise.race([work, deadline]);
  clearTimeout(timer);
}

/** Resolves with the first SIGINT or SIGTERM, or a `request()` (the `POST /shutdown` route). */
function shutdownSignal(): {
  received: Promise<string>;
  request(reason: string): void;
  dispose(): void;
} {
  let resolve: (signal: string) => void = () => {};
  const received = new Promise<string>((r) => (resolve = r));
  const handlers = (["SIGINT", "SIGTERM"] as const).map((signal) => {
    const handler = () => resolve(signal);
    Deno.addSignalListener(signal, handler);
    return [signal, handler] as const;
  });
  return {
    received,
    request: (reason) => resolve(reason),
    dispose: () =>
      handlers.forEach(([signal, handler]) => Deno.removeSignalListener(signal, handler)),
  };
}
