/**
 * A large change on a master whose replicas run elsewhere: the master alone on the first
 * CPU, one replica on each other CPU (up to three; pinned with `taskset` where the machine
 * has two CPUs or more, as on an agent host whose sandboxes are microVMs), all connected and
 * synced, when a
 * realistic tree of 10,000 files (`makeRealisticTree`) is copied into the master's workspace
 * at once. It reports:
 *
 * - the time from the copy's start until every replica holds the whole tree, against the
 *   same copy into a folder carried by `rsync -a` to as many folders, then `sync`, measured
 *   in the same run;
 * - how often a replica lost its connection meanwhile (it should never: a master busy
 *   taking in a change still answers, and a replica rides out a long silence);
 * - the master's CPU time and its peak resident memory while it takes the change in.
 *
 * `CHRONICLE_BENCH_QUICK=1` (or `--quick`) runs tiny sizes in a few seconds.
 *
 * Run: `deno run -A bench/large_change_bench.ts`
 *
 * @module
 */
import {
  discard,
  formatMiB,
  formatNumber,
  peerUnavailable,
  processCpuMs,
  processRssBytes,
  quickMode,
  runPeer,
  startBinaryPeer,
  syncDisks,
} from "./_lib/mod.ts";
import type { Peer } from "../tests/replication/_harness.ts";
import { makeRealisticTree } from "../tests/_helpers/realistic_tree.ts";
import { waitForSameTrees } from "../tests/_helpers/tree_state.ts";

/** Sizes for one run. */
interface Sizes {
  files: number;
  /** At most; one per CPU besides the master's, each standing for a sandbox's machine. */
  replicas: number;
}

const FULL: Sizes = { files: 10_000, replicas: 3 };
const QUICK: Sizes = { files: 300, replicas: 1 };

/** How long every replica may take to hold the change before the run fails. */
const CONVERGE_TIMEOUT_MS = 600_000;

/** What a replica logs each time it loses its master (see `lib/replication`). */
const DISCONNECTED = "disconnected from the master";
/** What the master logs when its file watcher lost events (then it scans the workspace). */
const EVENTS_LOST = "file events were lost";

/**
 * Runs the benchmark.
 *
 * @param quick Tiny sizes.
 * @returns Printable result lines.
 */
export async function run(quick: boolean): Promise<string[]> {
  const sizes = quick ? QUICK : FULL;
  const base = await Deno.makeTempDir({ prefix: "chronicle-large-change-bench-" });
  const corpus = `${base}/corpus`;
  const m = `${base}/m`;
  for (const dir of [corpus, m]) await Deno.mkdir(dir);
  await makeRealisticTree(corpus, { files: sizes.files, seed: 11 });
  await Deno.writeTextFile(`${m}/README.md`, "before the change\n");
  const socket = `${base}/m.sock`;
  const cpus = navigator.hardwareConcurrency;
  const replicaCount = Math.max(1, Math.min(sizes.replicas, cpus - 1));
  const master = await startBinaryPeer("master", "_master.ts", ["--root", m, "--socket", socket]);
  const replicas: Peer[] = [];
  try {
    const pinned = cpus >= 2 && await pin(master, "0");
    for (let i = 0; i < replicaCount; i++) {
      const r = `${base}/r${i}`;
      await Deno.mkdir(r);
      const replica = await startBinaryPeer(`replica-${i}`, "_replica.ts", [
        "--root",
        r,
        "--connect",
        socket,
      ]);
      replicas.push(replica);
      if (pinned) await pin(replica, `1-${cpus - 1}`);
    }
    await Promise.all(replicas.map((replica) => replica.command("sync-wait 120000", 180_000)));
    await syncDisks();
    const dropsBefore = replicas.map((replica) => count(replica.logs(), DISCONNECTED));
    const lossesBefore = count(master.logs(), EVENTS_LOST);
    const cpuBefore = await processCpuMs(master.info.pid as number);
    const peak = watchPeakRss(master.info.pid as number);
    const start = performance.now();
    if (!(await runPeer("cp", ["-a", `${corpus}/.`, `${m}/incoming`]))) {
      throw new Error("cp -a of the corpus into the master's workspace failed");
    }
    const copiedMs = performance.now() - start;
    await master.command("settle", CONVERGE_TIMEOUT_MS);
    const recordedMs = performance.now() - start;
    await Promise.all(
      replicas.map((replica) =>
        replica.command(`sync-wait ${CONVERGE_TIMEOUT_MS}`, CONVERGE_TIMEOUT_MS + 60_000)
      ),
    );
    const convergedMs = performance.now() - start;
    const masterCpuMs = await processCpuMs(master.info.pid as number) - cpuBefore;
    const peakRss = peak.stop();
    await waitForSameTrees([m, ...replicas.map((_, i) => `${base}/r${i}`)], {
      peers: [master, ...replicas],
    });
    const drops = replicas.reduce(
      (sum, replica, i) => sum + count(replica.logs(), DISCONNECTED) - dropsBefore[i]!,
      0,
    );
    const losses = count(master.logs(), EVENTS_LOST) - lossesBefore;
    const rsyncMs = await rsyncToEach(base, corpus, replicaCount);
    const others = cpus === 2 ? "CPU 1" : `CPUs 1-${cpus - 1}`;
    const placement = pinned
      ? `the master pinned to CPU 0, ${
        replicaCount === 1 ? "the replica" : "its replicas"
      } to ${others}`
      : `master and replicas sharing ${cpus} CPU${cpus === 1 ? "" : "s"} (taskset unavailable)`;
    return [
      `large change on a master with ${replicaCount} replica${
        replicaCount === 1 ? "" : "s"
      } connected (${placement}): ` +
      `${formatNumber(sizes.files)} files copied into its workspace in ${
        formatNumber(copiedMs)
      } ms; from the copy's start, recorded by the master after ${
        formatNumber(recordedMs)
      } ms, on every replica after ${formatNumber(convergedMs)} ms`,
      rsyncMs === null
        ? `  rsync: ${peerUnavailable("rsync")}`
        : `  the same cp -a into a folder, then rsync -a of it to ${replicaCount} folder${
          replicaCount === 1 ? "" : "s"
        }, then sync: ${formatNumber(rsyncMs)} ms (Chronicle ${
          formatNumber(convergedMs / rsyncMs, 2)
        }x that time)`,
      `  replicas that lost their connection meanwhile: ${drops} times; master CPU time ${
        formatNumber(masterCpuMs)
      } ms (${formatNumber((masterCpuMs / sizes.files) * 1000, 1)} ms per 1,000 files), ` +
      `peak RSS ${formatMiB(peakRss)}; ` +
      `file events the master's watcher lost: ${losses} time${losses === 1 ? "" : "s"}`,
    ];
  } finally {
    await Promise.all(replicas.map((replica) => replica.stop()));
    await master.stop();
    await discard(base);
  }
}

/**
 * Pins every thread of a peer's process to `cpus` (threads it starts later inherit it).
 *
 * @returns Whether `taskset` did it.
 */
function pin(peer: Peer, cpus: string): Promise<boolean> {
  return runPeer("taskset", ["-a", "-c", "-p", cpus, String(peer.info.pid)]);
}

/** How many lines of `text` hold `needle`. */
function count(text: string, needle: string): number {
  return text.split("\n").filter((line) => line.includes(needle)).length;
}

/**
 * The same change made and carried by hand: `cp -a` of `source` into a fresh folder, then
 * `rsync -a` of that folder to `copies` fresh folders, one after another, then `sync`; ms.
 */
async function rsyncToEach(base: string, source: string, copies: number): Promise<number | null> {
  await syncDisks();
  const host = `${base}/rsync-host`;
  await Deno.mkdir(host);
  const start = performance.now();
  if (!(await runPeer("cp", ["-a", `${source}/.`, `${host}/incoming`]))) return null;
  for (let i = 0; i < copies; i++) {
    if (!(await runPeer("rsync", ["-a", `${host}/`, `${base}/rsync-${i}/`]))) return null;
  }
  await syncDisks();
  return performance.now() - start;
}

/** Samples a process's resident size every 50 ms until stopped; `stop` gives the largest. */
function watchPeakRss(pid: number): { stop(): number } {
  let peak = 0;
  // Once the process ended its size reads 0: the last sample stands.
  const sample = () => void (peak = Math.max(peak, processRssBytes(pid)));
  sample();
  const timer = setInterval(sample, 50);
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}

if (import.meta.main) {
  for (const line of await run(quickMode())) console.log(line);
}
