import { basename, resolve } from "node:path";
import { isConflictChoice } from "../replication/mod.ts";
import { resolveLayout, type WorkspaceLayout } from "../workspace/mod.ts";
import { controlRequest, jsonOrFail, requireRunning } from "./control_client.ts";
import { CliError, UsageError } from "./errors.ts";
import { LOCATE_ARGS, locateFromArgs } from "./locate_workspace.ts";
import { printJson, println } from "./output.ts";
import { parseCommandArgs } from "./parse_command_args.ts";
import { syncWaitCommand } from "./replication_commands.ts";
import { nearestWord } from "./suggest.ts";

const USAGE = `Usage:
  chronicle sync --wait [--timeout SECONDS]
  chronicle sync start [DIR] (--connect PATH | --ws-connect URL) [--token T] [--debounce-ms N]
                       [--heartbeat-ms N] [--ignore P]…
  chronicle sync stop|status [-C DIR]
  chronicle sync resolve PATH --keep local|upstream|merged [-C DIR]`;

/**
 * `chronicle sync …`: the barrier (`--wait`) on any replica, and local-sync control, the
 * command-line twin of the desktop client's start, stop, status and resolve.
 */
export function syncCommand(args: string[]): Promise<number> {
  const [action, ...rest] = args;
  switch (action) {
    case "start":
      return syncStart(rest);
    case "stop":
      return syncStop(rest);
    case "status":
      return syncStatus(rest);
    case "resolve":
      return syncResolve(rest);
    default:
      if (args.some((arg) => arg === "--wait")) return syncWaitCommand(args);
      throw new UsageError(`${syncActionProblem(action)}\n${USAGE}`);
  }
}

/** The actions of `chronicle sync`, besides `--wait`. */
const SYNC_ACTIONS = ["start", "stop", "status", "resolve"];

/** What is wrong with `chronicle sync ACTION`, when ACTION is no action and no `--wait` came. */
function syncActionProblem(action: string | undefined): string {
  if (action === undefined || action.startsWith("-")) {
    return `chronicle sync needs an action (${SYNC_ACTIONS.join(", ")}) or --wait`;
  }
  if (action === "wait") return `Waiting is a flag: chronicle sync --wait`;
  const near = nearestWord(action, SYNC_ACTIONS);
  return `Unknown sync action "${action}"${near === undefined ? "" : `: did you mean "${near}"?`}`;
}

/** Longest `sync start` waits for the new replica to answer on its control socket. */
const START_TIMEOUT_MS = 30_000;

async function syncStart(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("sync start", args, {
    connect: { type: "string" },
    "ws-connect": { type: "string" },
    token: { type: "string" },
    "data-dir": { type: "string" },
    "debounce-ms": { type: "string" },
    "heartbeat-ms": { type: "string" },
    ignore: { type: "string", multiple: true },
    "sandbox-id": { type: "string" },
    json: { type: "boolean" },
  });
  if (positionals.length > 1 || (!values.connect && !values["ws-connect"])) {
    throw new UsageError(USAGE);
  }
  const root = resolve(positionals[0] ?? ".");
  await Deno.mkdir(root, { recursive: true });
  const layout = resolveLayout({ root, dataDir: values["data-dir"] });
  if (await controlRequest(layout, "/health")) {
    throw new CliError(`Chronicle is already running on "${root}"`);
  }
  const daemonArgs = [root, "--local-sync"];
  const pass = [
    "connect",
    "ws-connect",
    "token",
    "data-dir",
    "debounce-ms",
    "heartbeat-ms",
    "sandbox-id",
  ] as const;
  for (const name of pass) {
    if (values[name] !== undefined) daemonArgs.push(`--${name}`, values[name]!);
  }
  for (const pattern of values.ignore ?? []) daemonArgs.push("--ignore", pattern);
  await Deno.mkdir(layout.dataDir, { recursive: true });
  const logPath = `${layout.dataDir}/local-sync.log`;
  spawnDetached(daemonArgs, logPath);
  const status = await waitUntilRunning(layout);
  if (values.json) printJson(status);
  else println(`local-sync running on ${root} (log: ${logPath})`);
  return 0;
}

async function syncStop(args: string[]): Promise<number> {
  const { values } = parseCommandArgs("sync stop", args, { ...LOCATE_ARGS });
  const layout = locateFromArgs(values);
  const status = await jsonOrFail<{ role?: string }>(await requireRunning(layout, "/sync/status"));
  if (status.role !== "local-sync") {
    throw new CliError(
      `Chronicle on "${layout.root}" runs as ${
        status.role ?? "standalone"
      }, not local-sync: stop it with SIGTERM`,
    );
  }
  await jsonOrFail(await requireRunning(layout, "/shutdown", { method: "POST" }));
  const deadline = Date.now() + START_TIMEOUT_MS;
  // A connection cut while the daemon closes its socket means it is going: keep polling.
  while (await controlRequest(layout, "/health").catch(() => new Response(null, { status: 503 }))) {
    if (Date.now() > deadline) throw new CliError(`Chronicle on "${layout.root}" did not stop`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  println(`stopped Chronicle on ${layout.root}`);
  return 0;
}

async function syncStatus(args: string[]): Promise<number> {
  const { values } = parseCommandArgs("sync status", args, {
    ...LOCATE_ARGS,
    json: { type: "boolean" },
  });
  const layout = locateFromArgs(values);
  const status = await jsonOrFail<Record<string, unknown>>(
    await requireRunning(layout, "/sync/status"),
  );
  if (values.json) printJson(status);
  else printSyncStatus(status);
  return 0;
}

async function syncResolve(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("sync resolve", args, {
    ...LOCATE_ARGS,
    keep: { type: "string" },
    json: { type: "boolean" },
  });
  const keep = values.keep;
  if (positionals.length !== 1 || !isConflictChoice(keep)) {
    throw new UsageError(USAGE);
  }
  const layout = locateFromArgs(values);
  const response = await requireRunning(layout, "/sync/resolve", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ path: positionals[0], keep }),
  });
  const result = await jsonOrFail<{ path: string; state: string; message: string }>(response);
  if (values.json) printJson(result);
  else println(result.message);
  return 0;
}

function printSyncStatus(status: Record<string, unknown>): void {
  println(`role: ${status.role ?? "standalone"}`);
  if (Array.isArray(status.replicas)) {
    // A master: its replicas, not a replica's sequences (which it has none of).
    const replicas = status.replicas as Record<string, unknown>[];
    println(`sequence: ${status.sequence ?? "-"}`);
    println(`replicas: ${replicas.length === 0 ? "none yet" : replicas.length}`);
    for (const r of replicas) {
      println(
        `  ${r.sandboxId}: ${
          r.connected ? "connected" : "disconnected"
        }, acked ${r.ackedSequence}, lag ${r.lag}`,
      );
    }
    return;
  }
  if (status.appliedSequence === undefined) {
    println("no replication here: chronicle status shows this workspace");
    return;
  }
  const conflicts =
    (status.conflicts as Array<{ path: string; reason: string; resolvedMs: number | null }>) ?? [];
  const open = conflicts.filter((conflict) => conflict.resolvedMs === null);
  println(
    `master: ${status.master ?? "-"} (${
      status.connected ? "connected" : "disconnected"
    }, ${status.state})`,
  );
  println(`sequence: applied ${status.appliedSequence} of ${status.masterSequence}`);
  println(`pending uploads: ${status.pendingWriteBacks}`);
  // The list holds the newest 100 conflicts; the count (when served) is all of them.
  const openCount = typeof status.openConflictCount === "number"
    ? status.openConflictCount
    : open.length;
  println(`open conflicts: ${openCount}`);
  for (const conflict of open) println(`  ${conflict.path}: ${conflict.reason}`);
  if (open.length < openCount) {
    println(`  … and ${openCount - open.length} older: chronicle conflicts --all lists them`);
  }
  // Master versions that could not be applied here, with why.
  const problems = (status.problems as Array<{ path: string; reason: string }>) ?? [];
  if (problems.length > 0) {
    println(`not applied: ${problems.length}`);
    for (const problem of problems) println(`  ${problem.path}: ${problem.reason}`);
  }
}

/**
 * The permissions the compiled binaries run with (every `compile:*` task in deno.json
 * grants exactly these), and so a detached Chronicle started through `deno run`.
 */
export const BINARY_PERMISSIONS: readonly string[] = [
  "--allow-read",
  "--allow-write",
  "--allow-net",
  "--allow-env",
  "--allow-run=sync", // one flush of the file system for a large batch (lib/disk)
];

/**
 * The V8 flags the compiled binaries run with (every `compile:*` task and the `start` task
 * in deno.json pass exactly these), and so a detached Chronicle started through `deno run`.
 *
 * Semi-spaces of 1 MiB instead of V8's default of up to 16 MiB on 64-bit: a scan or an
 * initial sync allocates short-lived objects (file stats, rows, frames) fast, and the
 * default young generation grows to its largest and stays resident. Measured on 30,000
 * files (`bench/scale_bench.ts`): a replica's peak during its initial sync about 240 to
 * 180 MiB, the master's idle RSS after its scan about 250 to 210 MiB, with no CPU time
 * difference above the noise. `--optimize-for-size` and `--heap-growing-percent` cut more
 * but cost a quarter to a half more CPU time in an initial sync; so does `--memory-saver-mode`
 * (at 100,000 files the replica's peak 286 to 152 MiB, the master's idle 229 to 119 MiB, but
 * the initial sync 2.27x to 2.96x `rsync -a` then `sync`, the replica's CPU time a third more).
 * glibc's `MALLOC_ARENA_MAX=2` and `MALLOC_MMAP_THRESHOLD_` made no difference above the noise
 * at 30,000 files: the memory malloc keeps is in its main heap, freed in small pieces.
 * Ten copies of a synced replica of 100,000 files restarting at once (each reading every file
 * again) peaked at 140 to 160 MiB from one run to the next with these flags, and as much
 * with each of five additions, measured in three runs beside these flags: `MALLOC_ARENA_MAX=2`
 * (151 to 154 MiB), with `MALLOC_TRIM_THRESHOLD_` too (151), `--no-memory-pool` (162),
 * `--no-large-page-pool` (152), `--compact-on-every-full-gc` (167). V8's trace of such a scan
 * shows 15 to 30 MiB of heap in use and about 27 MiB of pages pooled for reuse throughout.
 * All of that with the checkpoint worker running from start to close; it now runs only during
 * a large catch-up (`CheckpointWhileBusy` in lib/db), about 6 MiB less in each such copy.
 *
 * Not `--single-threaded-gc` (V8 collecting on the main thread alone), measured and dropped:
 * at 100,000 files on a RAM disk (`bench/scale_bench.ts`, four runs each) it took the replica's
 * peak from 165 to 167 MiB down to 153 to 157 and the master's RSS after its scan from 160 to
 * 163 MiB to 130 to 136, for 4% more of the replica's CPU time in an initial sync there; but on
 * this machine's disk the realistic corpus's initial sync took the replica 417 to 510 ms of
 * CPU time per 1,000 entries against 332 to 424 without it, and 6.2 to 8.0 s against 5.1 to
 * 6.7 (two interleaved runs), as in a full record (556 against 414 ms before).
 *
 * `--expose-gc` gives the heap keeper (lib/memory) V8's `gc()`: a large process collects its
 * garbage every 8 MiB (or a quarter of what is alive, when more) instead of letting it fill
 * the old generation (at 100,000 files the replica's peak while syncing 209 to 144 MiB, for
 * 5 to 7% of its time in the sync).
 */
export const BINARY_V8_FLAGS: readonly string[] = [
  "--v8-flags=--max-semi-space-size=1,--expose-gc",
];

/**
 * Starts Chronicle in the background, detached from this process, its output appended to
 * a log file. The shell does the redirection: a pipe to this short-lived process would
 * break when it exits.
 */
function spawnDetached(args: string[], logPath: string): void {
  const compiled = !basename(Deno.execPath()).startsWith("deno");
  const program = compiled
    ? [Deno.execPath()]
    : [Deno.execPath(), "run", ...BINARY_V8_FLAGS, ...BINARY_PERMISSIONS, Deno.mainModule];
  const child = new Deno.Command("/bin/sh", {
    args: [
      "-c",
      'log="$1"; shift; exec "$@" >>"$log" 2>&1',
      "chronicle-sync",
      logPath,
      ...program,
      ...args,
    ],
    stdin: "null",
    stdout: "null",
    stderr: "null",
    detached: true,
  }).spawn();
  child.unref();
}

async function waitUntilRunning(layout: WorkspaceLayout): Promise<unknown> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const response = await controlRequest(layout, "/sync/status").catch(() => undefined);
    if (response?.ok) return await response.json();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new CliError(
    `Local-sync did not start within ${
      START_TIMEOUT_MS / 1000
    } s: see ${layout.dataDir}/local-sync.log`,
  );
}
