/**
 * Helpers for the local-sync end-to-end tests: a master and a local-sync replica run as
 * real `main.ts` processes, watched over their control sockets (`DATA/control.sock`), the
 * way the desktop client does.
 */
import { errorMessage } from "../../lib/log/mod.ts";
import { type Child, runChronicle, spawnChronicle } from "../_helpers/processes.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import { controlJson } from "../_helpers/control_socket.ts";
import { readText } from "../_helpers/temp_dir.ts";

/** Deadline for every wait in these tests. */
export const DEADLINE_MS = 30_000;

/** One iteration as `chronicle history --json` and `GET /files/{path}/history` give it. */
export interface HistoryEntry {
  path: string;
  iteration: number;
  sequence: number;
  hash: string;
  mode: number;
  deleted: boolean;
  origin: string;
}

/** One conflict as the replica's status lists it. */
export interface ConflictEntry {
  path: string;
  reason: string;
  resolvedMs: number | null;
  resolution: string | null;
  keptHash: string;
}

/** The parts of `GET /sync/status` these tests read. */
export interface SyncStatus {
  role: string;
  sandboxId: string;
  connected: boolean;
  state: string;
  appliedSequence: number;
  masterSequence: number;
  pendingWriteBacks: number;
  journal: { pending: number; sent: number; accepted: number; rejected: number; refused: number };
  conflicts: ConflictEntry[];
  problems: { path: string; reason: string }[];
  connections: number;
}

/**
 * A REST request to the Chronicle running on `root`, over its control socket.
 *
 * @returns The status and the decoded JSON body (`undefined` when not JSON).
 */
export function control(
  root: string,
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; body: unknown }> {
  return controlJson(`${root}/.chronicle`, path, init);
}

/** The replica's `GET /sync/status`. */
export async function syncStatus(local: string): Promise<SyncStatus> {
  const { status, body } = await control(local, "/sync/status");
  if (status !== 200) throw new Error(`GET /sync/status answered ${status}`);
  return body as SyncStatus;
}

/** A path's iterations in a running Chronicle's store (`[]` when it never held the path). */
export async function historyOf(root: string, path: string): Promise<HistoryEntry[]> {
  const encoded = path.split("/").map(encodeURIComponent).join("/");
  const { status, body } = await control(root, `/files/${encoded}/history`);
  if (status === 404) return [];
  if (status !== 200) throw new Error(`GET /files/${path}/history answered ${status}`);
  return body as HistoryEntry[];
}

/** Every path a running Chronicle's store ever recorded (`GET /changes` from the start). */
export async function recordedPaths(root: string): Promise<Set<string>> {
  const { status, body } = await control(root, "/changes?since=0&limit=10000");
  if (status !== 200) throw new Error(`GET /changes answered ${status}`);
  return new Set((body as { changes: { path: string }[] }).changes.map((change) => change.path));
}

/** Reads a text file, `undefined` when it is missing. */
export { readText };

/** Waits until a file holds `expected` (or is gone, for `undefined`). */
export async function waitForText(
  path: string,
  expected: string | undefined,
  timeoutMs = DEADLINE_MS,
): Promise<void> {
  await waitFor(`${path} to hold ${JSON.stringify(expected)}`, async () => {
    return (await readText(path)) === expected;
  }, { timeoutMs, intervalMs: 50 });
}

/** Runs `chronicle ARGS`, failing with its stderr unless it exits 0; parses `--json` output. */
export async function chronicleJson<T>(args: string[]): Promise<T> {
  const result = await runChronicle(args);
  if (result.code !== 0) {
    throw new Error(`chronicle ${args.join(" ")} exited ${result.code}: ${result.stderr}`);
  }
  return JSON.parse(result.stdout) as T;
}

/** The master's replication socket for an agent folder. */
export function socketOf(agent: string): string {
  return `${agent}/.chronicle/chronicle.sock`;
}

/** Starts a master on `agent` and waits until its control socket answers. */
export async function startMaster(agent: string): Promise<Child> {
  const child = spawnChronicle([agent, "--replication", "--heartbeat-ms", "200"]);
  let exited = false;
  child.process.status.then(() => exited = true);
  try {
    await waitFor("the master to answer", async () => {
      if (exited) throw new Error(`the master exited: ${child.output()}`);
      return (await control(agent, "/health").catch(() => undefined))?.status === 200;
    }, { timeoutMs: DEADLINE_MS, intervalMs: 50 });
  } catch (error) {
    await child.stop();
    throw error;
  }
  return child;
}

/** Starts a local-sync replica of `agent` on `local` (a child process) and waits until it is live. */
export async function startLocalSync(agent: string, local: string): Promise<Child> {
  const child = spawnChronicle([
    local,
    "--local-sync",
    "--connect",
    socketOf(agent),
    "--heartbeat-ms",
    "200",
  ]);
  try {
    await waitForLive(local);
  } catch (error) {
    await child.stop();
    throw new Error(`${errorMessage(error)}\n${child.output()}`);
  }
  return child;
}

/** Waits until the replica on `local` is connected, live and caught up with the master. */
export function waitForLive(local: string): Promise<SyncStatus> {
  return waitFor(`the replica on ${local} to be live`, async () => {
    const status = await syncStatus(local);
    const live = status.connected && status.state === "live" &&
      status.appliedSequence >= status.masterSequence;
    return live ? status : undefined;
  }, { timeoutMs: DEADLINE_MS, intervalMs: 50 });
}

/**
 * Waits until the replica on `local` has no write-back waiting for the master and has
 * applied everything the master announced.
 */
export function waitForQuiet(local: string): Promise<SyncStatus> {
  return waitFor(`the replica on ${local} to have nothing pending`, async () => {
    const status = await syncStatus(local);
    const quiet = status.connected && status.state === "live" && status.pendingWriteBacks === 0 &&
      status.appliedSequence >= status.masterSequence;
    return quiet ? status : undefined;
  }, { timeoutMs: DEADLINE_MS, intervalMs: 50 });
}

/**
 * Stops a detached local-sync replica started by `chronicle sync start`: `sync stop`, and
 * if that fails, SIGTERM to the process (found by its command line naming `local`).
 */
export async function stopDetached(local: string): Promise<void> {
  const stopped = await runChronicle(["sync", "stop", "-C", local]);
  if (stopped.code === 0) return;
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const cmdline = await Deno.readTextFile(`/proc/${entry.name}/cmdline`).catch(() => "");
    const args = cmdline.split("\0");
    if (args.includes("--local-sync") && args.includes(local)) {
      try {
        Deno.kill(Number(entry.name), "SIGTERM");
      } catch { /* already gone */ }
    }
  }
}
