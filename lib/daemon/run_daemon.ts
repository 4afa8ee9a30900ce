import type { Hono } from "hono";
import { WORKSPACE_ROOT_META } from "../cli/locate_workspace.ts";
import { type ChronicleConfig, parseHostPort } from "../config/mod.ts";
import { createApp, filesRoutes } from "../http/mod.ts";
import { configureLogging, log } from "../log/mod.ts";
import { defaultRegistry, metrics, metricsRoutes } from "../metrics/mod.ts";
import { snapshotRoutes } from "../http/snapshot_routes.ts";
import {
  keptConflictHashes,
  type MasterHandle,
  type MasterStatus,
  type ReplicaStatus,
  startMaster,
  startReplica,
} from "../replication/mod.ts";
import { openWorkspaceSnapshots, type Snapshots } from "../snapshot/mod.ts";
import { EDITOR_NOISE_PATTERNS } from "../localsync/mod.ts";
import { Workspace } from "../workspace/mod.ts";
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
  workspace.store.setMeta(WORKSPACE_ROOT_META, workspace.root);
  workspace.store.setMeta("role", role);
  workspace.store.onRecorded((recorded) => metrics.iterations.inc(recorded.length));
  const snapshots = openWorkspaceSnapshots(workspace, {
    config: config.snapshots,
    offTheRecord: config.noSnapshots,
  });
  const services: Service[] = [];
  let ready = false;
  let replication: ReplicationHandle = { kind: "none" };
  const shutdown = shutdownSignal();
  // Gauges that describe the store are read when scraped, not kept up to date.
  const removeCollector = defaultRegistry.addCollector(() => {
    metrics.sequence.set(workspace.store.sequence());
    metrics.bytesStored.set(workspace.store.stats().bytes);
    if (replication.kind === "master") recordReplicaMetrics(replication.master);
  });
  try {
    const routes: Hono[] = [
      opsRoutes({
        role,
        sequence: () => workspace.store.sequence(),
        ready: () => ready && replicaLive(replication),
        shutdown: () => shutdown.request("POST /shutdown"),
        status: () => {
          // One status() per request: a replica's or master's status is not cheap.
          const state = replicationState(replication);
          return {
            running: true,
            role,
            version: VERSION,
            workspace: workspace.root,
            agent_id: config.agentId ?? null,
            sequence: workspace.store.sequence(),
            ready: ready && state.live,
            ...workspace.store.stats(),
            replication: state.status,
          };
        },
      }),
      metricsRoutes(),
      filesRoutes(workspace),
      snapshotRoutes({ snapshots }),
      replicationRoutes(() => replication),
    ];
    services.push(...await startServers(config, workspace.layout.controlSocket, routes));
    const scan = await workspace.scan();
    log("info", "initial scan done", {
      workspace: workspace.root,
      recorded: scan.recorded.length,
      problems: scan.problems.length,
      sequence: workspace.store.sequence(),
    });
    // Local-sync waits out an editor's whole save; elsewhere a closed file is recorded at once.
    await workspace.watch({ debounceMs: config.debounceMs, captureOnClose: !localSync });
    replication = await startReplication(config, role, workspace);
    if (replication.kind !== "none") {
      services.push({
        name: "replication",
        close: () => closeReplication(replication),
      });
    }
    const poll = setInterval(() => workspace.store.pollExternal(), EXTERNAL_POLL_MS);
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
  } finally {
    shutdown.dispose();
    removeCollector();
    await closeAll(services, workspace);
  }
  return 0;
}

async function startServers(
  config: ChronicleConfig,
  controlPath: string,
  routes: Hono[],
): Promise<Service[]> {
  const services: Service[] = [];
  const control = await serveUnix(
    controlPath,
    createApp({ token: config.token, trustedCaller: true, routes }).fetch,
  );
  services.push({
    name: "control socket",
    close: async () => {
      await control.shutdown();
      await Deno.remove(controlPath).catch(() => undefined);
    },
  });
  if (config.http) {
    // resolveConfig has already refused a non-loopback address without a token.
    const { hostname, port } = parseHostPort(config.http);
    const app = createApp({ token: config.token, trustedCaller: false, routes });
    const server = Deno.serve({ hostname, port, onListen() {} }, app.fetch);
    log("info", "REST API listening", { http: config.http });
    services.push({ name: "http", close: () => server.shutdown() });
  }
  return services;
}

/** Starts the master or replica the configuration asks for. */
async function startReplication(
  config: ChronicleConfig,
  role: DaemonRole,
  workspace: Workspace,
): Promise<ReplicationHandle> {
  const common = {
    workspace,
    token: config.token,
    heartbeatMs: config.heartbeatMs,
    maxWritebackBytes: config.maxWritebackBytes,
  };
  if (role === "master") {
    const master = await startMaster({
      ...common,
      socketPath: config.socket,
      wsListen: config.wsListen,
      insecure: config.insecure,
      agentId: config.agentId,
      writebackModeBits: config.writebackModeBits,
    });
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
    });
    return { kind: "replica", replica };
  }
  return { kind: "none" };
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
    const owner = {
      hashes: () =>
        new Set([...workspace.store.hashes(), ...keptConflictHashes(workspace.store.db)]),
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
