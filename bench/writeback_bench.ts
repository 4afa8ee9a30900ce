/**
 * Write-back benchmark, replica → master, with master and replica as separate processes
 * (the test runners `tests/replication/_master.ts` and `_replica.ts`):
 *
 * - latency from a write on the sandbox's disk to the file on the master's disk, p50 and
 *   p99, one write at a time;
 * - throughput of a burst of small files written in the sandbox until all are on the
 *   master, against `rsync -a` copying the same files, measured in the same run.
 *
 * `CHRONICLE_BENCH_QUICK=1` (or `--quick`) runs tiny sizes in a few seconds.
 *
 * Run: `deno run -A bench/writeback_bench.ts`
 *
 * @module
 */
import {
  discard,
  formatNumber,
  latencyLine,
  peerUnavailable,
  propagationLatency,
  quickMode,
  runPeer,
  syncDisks,
} from "./_lib/mod.ts";
import { Peer } from "../tests/replication/_harness.ts";
import type { ReplicaStatus } from "../lib/replication/mod.ts";

/** Sizes for one run. */
interface Sizes {
  latencyWrites: number;
  burstFiles: number;
}

const FULL: Sizes = { latencyWrites: 1000, burstFiles: 10_000 };
const QUICK: Sizes = { latencyWrites: 30, burstFiles: 200 };

/**
 * Runs the benchmark.
 *
 * @param quick Tiny sizes.
 * @returns Printable result lines.
 */
export async function run(quick: boolean): Promise<string[]> {
  const sizes = quick ? QUICK : FULL;
  const base = await Deno.makeTempDir({ prefix: "chronicle-writeback-bench-" });
  const m = `${base}/m`;
  const r = `${base}/r`;
  await Deno.mkdir(m);
  await Deno.mkdir(r);
  const socket = `${base}/m.sock`;
  const master = await Peer.start("master", "_master.ts", ["--root", m, "--socket", socket]);
  const replica = await Peer.start("replica", "_replica.ts", [
    "--root",
    r,
    "--connect",
    socket,
    "--debounce",
    "1",
  ]);
  try {
    await replica.command("sync-wait 20000");
    // Data earlier benchmarks left unwritten would slow every fsync measured here.
    await syncDisks();
    const latency = await propagationLatency(r, m, sizes.latencyWrites);
    const lines = [latencyLine("write-back latency, sandbox disk → master disk, unix", latency)];
    lines.push(...await burst(base, r, replica, sizes.burstFiles));
    return lines;
  } finally {
    await replica.stop();
    await master.stop();
    await discard(base);
  }
}

/** Writes `count` small files in the sandbox at once and times their arrival on the master. */
async function burst(base: string, r: string, replica: Peer, count: number): Promise<string[]> {
  const answered = (s: ReplicaStatus) =>
    s.journal.accepted + s.journal.rejected + s.journal.refused;
  const initial = await replica.command<ReplicaStatus>("status");
  const start = performance.now();
  await Deno.mkdir(`${r}/burst`);
  for (let i = 0; i < count; i++) {
    await Deno.writeTextFile(`${r}/burst/f${i}.txt`, `burst file ${i}\n`.repeat(1 + (i % 20)));
  }
  const written = performance.now() - start;
  let status = initial;
  let progress = -1;
  let progressAt = performance.now();
  let missedByWatcher = 0;
  while (answered(status) - answered(initial) < count || status.pendingWriteBacks > 0) {
    if (answered(status) !== progress) {
      [progress, progressAt] = [answered(status), performance.now()];
    }
    if (performance.now() - progressAt > 10_000 && status.pendingWriteBacks === 0) {
      // Nothing in flight and files missing: the sandbox's file watcher lost their events.
      // A rescan records them; the result line says how many it had to find.
      if (missedByWatcher > 0) {
        throw new Error(`Write-back stalled: ${JSON.stringify(status.journal)}`);
      }
      const { recorded } = await replica.command<{ recorded: number }>("scan");
      missedByWatcher = Math.max(1, recorded);
      progressAt = performance.now();
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    status = await replica.command<ReplicaStatus>("status");
  }
  const ms = performance.now() - start;
  const rate = count / (ms / 1000);
  const notAccepted = answered(status) - answered(initial) -
    (status.journal.accepted - initial.journal.accepted);
  // The peer: rsync copying the same files to a fresh folder.
  const target = `${base}/rsync-copy`;
  const rsyncStart = performance.now();
  const rsyncOk = await runPeer("rsync", ["-a", `${r}/burst/`, `${target}/`]);
  const rsyncMs = performance.now() - rsyncStart;
  return [
    `write-back burst of ${formatNumber(count)} small files: ${
      formatNumber(ms)
    } ms until all answered by the master, ${
      formatNumber(rate)
    } files/s, ${notAccepted} not accepted${
      missedByWatcher > 0
        ? `, ${missedByWatcher} missed by the sandbox's file watcher and found by a rescan after 10 s`
        : ""
    } (writing them took ${formatNumber(written)} ms)`,
    rsyncOk
      ? `  rsync -a of the same files: ${formatNumber(rsyncMs)} ms (Chronicle ${
        formatNumber(ms / rsyncMs, 2)
      }x rsync's time, which records no history and detects no conflict)`
      : `  rsync: ${peerUnavailable("rsync")}`,
  ];
}

if (import.meta.main) {
  for (const line of await run(quickMode())) console.log(line);
}
