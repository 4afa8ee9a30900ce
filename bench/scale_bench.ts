/**
 * Scale benchmark: a generated workspace of 100,000 small files (200 B to 6 KiB, as a
 * large monorepo holds) run by the real `chronicle` processes (`main.ts`, master and
 * replica):
 *
 * - the master's initial scan (start until `/ready`);
 * - the initial sync to a new replica, against `rsync -a` then `sync` of the same tree;
 * - `ls` (`GET /files?depth=1`) and `history` (`GET /files/{path}/history`) latency on
 *   the running master, over its control socket;
 * - the RSS of the master idle, its peak while a replica syncs, and the replica's peak.
 *
 * `CHRONICLE_BENCH_QUICK=1` (or `--quick`) runs 2,000 files.
 *
 * Run: `deno run -A bench/scale_bench.ts`
 *
 * @module
 */
import {
  discard,
  formatMiB,
  formatNumber,
  makeTree,
  peerUnavailable,
  percentile,
  quickMode,
  runPeer,
  syncDisks,
} from "./_lib/mod.ts";
import { waitFor } from "../tests/_helpers/wait_for.ts";
import { controlFetch, controlJson } from "../tests/_helpers/control_socket.ts";
import { type Child, spawnChronicle } from "../tests/_helpers/processes.ts";

/** How long one phase may take before the run fails. */
const PHASE_TIMEOUT_MS = 900_000;

/**
 * Runs the benchmark.
 *
 * @param quick 2,000 files instead of 100,000.
 * @returns Printable result lines.
 */
export async function run(quick: boolean): Promise<string[]> {
  const files = quick ? 2_000 : 100_000;
  const base = await Deno.makeTempDir({ prefix: "chronicle-scale-bench-" });
  const children: Child[] = [];
  try {
    const master = `${base}/master`;
    const replica = `${base}/replica`;
    await Deno.mkdir(master);
    await Deno.mkdir(replica);
    const tree = await makeTree(master, { files, seed: 11, maxSize: 6144 });
    const bytes = tree.reduce((sum, file) => sum + file.size, 0);
    await syncDisks();

    const rsync = await rsyncThenSync(master, `${base}/rsync`);

    const scanStart = performance.now();
    const masterChild = spawnChronicle([master, "--replication", "--quiet"]);
    children.push(masterChild);
    const masterData = `${master}/.chronicle`;
    const sequence = await waitReady(masterData, masterChild);
    const scanMs = performance.now() - scanStart;
    const masterIdle = rssBytes(masterChild);

    const syncStart = performance.now();
    const replicaChild = spawnChronicle([replica, "--connect", `${masterData}/chronicle.sock`]);
    children.push(replicaChild);
    const peaks = { master: masterIdle, replica: 0 };
    await waitFor(
      `the replica to apply sequence ${sequence}`,
      async () => {
        peaks.master = Math.max(peaks.master, rssBytes(masterChild));
        peaks.replica = Math.max(peaks.replica, rssBytes(replicaChild));
        const status = await controlJson(`${replica}/.chronicle`, "/sync/status").catch(() => null);
        const applied = (status?.body as { applied_sequence?: number; appliedSequence?: number }) ??
          {};
        return (applied.applied_sequence ?? applied.appliedSequence ?? 0) >= sequence;
      },
      { timeoutMs: PHASE_TIMEOUT_MS, intervalMs: 100 },
    );
    const syncMs = performance.now() - syncStart;

    const sample = tree[Math.floor(tree.length / 2)]!.path;
    const ls = await latencies(masterData, "/files?path=&depth=1");
    const history = await latencies(masterData, `/files/${encodeURIComponent(sample)}/history`);
    const ratio = rsync === null
      ? peerUnavailable("rsync")
      : `rsync -a then sync ${formatNumber(rsync)} ms (Chronicle ${
        formatNumber(syncMs / rsync, 2)
      }x its time)`;
    return [
      `scale (${formatNumber(files)} files, ${formatMiB(bytes)}): master initial scan ${
        formatNumber(scanMs)
      } ms; initial sync ${formatNumber(syncMs)} ms, ${ratio}`,
      `  ls of the top folder p50 ${
        formatNumber(percentile(ls, 50), 1)
      } ms; history of a file p50 ${
        formatNumber(percentile(history, 50), 1)
      } ms (control socket, 20 requests each)`,
      `  RSS: master ${formatMiB(masterIdle)} idle, ${formatMiB(peaks.master)} at most while ` +
      `a replica syncs; replica ${formatMiB(peaks.replica)} at most`,
    ];
  } finally {
    await Promise.all(children.map((child) => child.stop()));
    await discard(base);
  }
}

/** Waits for `/ready` and returns the master's sequence then. */
async function waitReady(dataDir: string, child: Child): Promise<number> {
  let sequence = 0;
  await waitFor(
    "the master's initial scan",
    async () => {
      const ready = await controlJson(dataDir, "/ready").catch(() => null);
      sequence = (ready?.body as { sequence?: number } | undefined)?.sequence ?? 0;
      return ready?.status === 200;
    },
    { timeoutMs: PHASE_TIMEOUT_MS, intervalMs: 50 },
  ).catch((error) => {
    throw new Error(`${error.message}; the master wrote: ${child.output().slice(-2000)}`);
  });
  return sequence;
}

/** Milliseconds of 20 requests to `path`, one after another. */
async function latencies(dataDir: string, path: string): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < 20; i++) {
    const start = performance.now();
    const response = await controlFetch(dataDir, path);
    if (!response.ok) throw new Error(`GET ${path} answered ${response.status}`);
    samples.push(performance.now() - start);
  }
  return samples;
}

/** `rsync -a` of the tree then `sync`, in ms, or `null` without rsync. */
async function rsyncThenSync(source: string, target: string): Promise<number | null> {
  const start = performance.now();
  if (!(await runPeer("rsync", ["-a", `${source}/`, `${target}/`]))) return null;
  await syncDisks();
  const ms = performance.now() - start;
  await discard(target);
  return ms;
}

function rssBytes(child: Child): number {
  try {
    const status = Deno.readTextFileSync(`/proc/${child.process.pid}/status`);
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? "0") * 1024;
  } catch {
    return 0;
  }
}

if (import.meta.main) {
  for (const line of await run(quickMode())) console.log(line);
}
