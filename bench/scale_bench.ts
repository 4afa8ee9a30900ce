/**
 * Scale benchmark: a generated workspace of 100,000 small files (200 B to 6 KiB, every
 * size as likely, as issue #17 measured: about 300 MiB, 510 MB on disk) run by the real
 * `chronicle` processes (`main.ts`, master and replicas):
 *
 * - the master's initial scan (start until `/ready`);
 * - the initial sync to a new replica, twice (two fresh replicas, one after the other),
 *   against `rsync -a` then `sync` of the same tree run before, between and after them (the
 *   disk's speed drifts from minute to minute: each sync's ratio is to the mean of the rsync
 *   runs on either side of it);
 * - `ls` (`GET /files?depth=1`) and `history` (`GET /files/{path}/history`) latency on
 *   the running master, over its control socket;
 * - then ten copies of the synced replica (each its own sandbox id) connecting at once;
 * - memory: the master's RSS idle, at most while the first replica syncs, at most while
 *   the ten connect, and with all ten connected and synced; each replica's at most. Beside
 *   each RSS, the V8 heap in use then (from `Deno.memoryUsage()` written by
 *   `_lib/memory_probe.ts`), which tells JavaScript objects from native memory.
 *
 * `CHRONICLE_BENCH_QUICK=1` (or `--quick`) runs 2,000 files and three replicas.
 * The first replica's memory at its peak is broken down (anonymous, of it malloc's main heap,
 * and V8's pages; file-backed; the V8 heap reserved and in use; array buffers; what glibc's
 * malloc holds, in use and free, from `mallinfo2` through the probe) from `/proc/PID/smaps`.
 * `CHRONICLE_SCALE_SMAPS=FILE` also writes that `smaps` to FILE, and each process's after it
 * settled to `FILE.settled.TIME`, for a person looking at every mapping.
 * `CHRONICLE_SCALE_FILES=N` and `CHRONICLE_SCALE_REPLICAS=N` set those counts (0 copies skips
 * that phase: only the scan and the first replica's initial sync, and its memory).
 * Every `chronicle` process runs with the V8 flags the binaries ship with (`BINARY_V8_FLAGS`,
 * as `deno task start` and the compile tasks pass them); `CHRONICLE_SCALE_V8_FLAGS` gives
 * others instead, comma-separated (empty for V8's defaults; for example
 * `--optimize-for-size`, which bounds the heap's growth), to compare their memory and time.
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
  processRssBytes,
  quickMode,
  runPeer,
  syncDisks,
} from "./_lib/mod.ts";
import { readMemorySample } from "./_lib/memory_probe.ts";
import { BINARY_V8_FLAGS } from "../lib/cli/mod.ts";
import { waitFor } from "../tests/_helpers/wait_for.ts";
import { controlFetch, controlJson } from "../tests/_helpers/control_socket.ts";
import { parsePrometheusText } from "../tests/metrics/_prometheus_text.ts";
import { type Child, spawnChronicle } from "../tests/_helpers/processes.ts";

/** How long one phase may take before the run fails. */
const PHASE_TIMEOUT_MS = 900_000;
/** The probe that runs `main.ts` and writes its memory figures (see `_lib/memory_probe.ts`). */
const PROBE_SCRIPT = new URL("./_lib/memory_probe.ts", import.meta.url).pathname;
/** How long a process is left alone before its "idle" memory is read. */
const SETTLE_MS = 2_000;

/** A `chronicle` process with its memory probe, and the most memory it was seen to use. */
interface Probed {
  child: Child;
  probe: string;
  dataDir: string;
  peak: MemoryFigure;
  /** Where its memory went at its peak, for the first replica (see `breakdown`). */
  peakBreakdown?: string;
}

/** RSS read from `/proc`, with the V8 heap in use when it was read. */
interface MemoryFigure {
  rss: number;
  heap: number;
}

/**
 * Runs the benchmark.
 *
 * @param quick 2,000 files and three replicas instead of 100,000 and ten.
 * @returns Printable result lines.
 */
export async function run(quick: boolean): Promise<string[]> {
  const v8Flags = Deno.env.get("CHRONICLE_SCALE_V8_FLAGS") ?? shippedV8Flags();
  const files = countFromEnv("CHRONICLE_SCALE_FILES") ?? (quick ? 2_000 : 100_000);
  const replicas = countFromEnv("CHRONICLE_SCALE_REPLICAS") ?? (quick ? 3 : 10);
  const base = await Deno.makeTempDir({ prefix: "chronicle-scale-bench-" });
  const children: Child[] = [];
  const spawn = (workspace: string, args: string[]): Probed => {
    const probe = `${workspace}.memory.json`;
    const child = spawnChronicle([workspace, ...args], {
      script: PROBE_SCRIPT,
      env: { CHRONICLE_MEMORY_PROBE: probe, CHRONICLE_MEMORY_PROBE_MALLINFO: "1" },
      permissions: v8Flags === "" ? ["-A"] : ["-A", `--v8-flags=${v8Flags}`],
    });
    children.push(child);
    return { child, probe, dataDir: `${workspace}/.chronicle`, peak: { rss: 0, heap: 0 } };
  };
  try {
    const master = `${base}/master`;
    await Deno.mkdir(master);
    const tree = await makeTree(master, {
      files,
      seed: 11,
      minSize: 200,
      maxSize: 6144,
      sizes: "uniform",
    });
    const bytes = tree.reduce((sum, file) => sum + file.size, 0);
    const onDisk = diskUsage(master);
    await syncDisks();

    const rsyncBefore = await rsyncThenSync(master, `${base}/rsync-before`);

    const scanStart = performance.now();
    const m = spawn(master, ["--replication", "--quiet"]);
    const sequence = await waitReady(m.dataDir, m.child);
    const scanMs = performance.now() - scanStart;
    const idle = await settled(m);
    progress(`master scanned in ${formatNumber(scanMs)} ms; idle ${figure(idle)}`);

    // The first replica alone: the sync time, and the memory while one syncs.
    const first = await Deno.makeTempDir({ dir: base, prefix: "replica-" });
    const syncStart = performance.now();
    const firstReplica = spawn(first, ["--connect", `${m.dataDir}/chronicle.sock`, "--quiet"]);
    firstReplica.peakBreakdown = "";
    m.peak = { rss: 0, heap: 0 };
    await waitSynced([firstReplica], sequence, m);
    const syncMs = performance.now() - syncStart;
    const whileOne = m.peak;
    const replicaSyncPeak = firstReplica.peak;
    // Caught up, the replica still scans (every file it just wrote is read again): its
    // peak until it is idle.
    const afterSyncMs = await untilIdle(firstReplica);
    const keeperOn = v8Flags.split(",").includes("--expose-gc");
    const keeperOff = "the heap keeper off (no --expose-gc)";
    const collected = keeperOn ? await heapCollections(firstReplica) : keeperOff;

    const sample = tree[Math.floor(tree.length / 2)]!.path;
    const ls = await latencies(m.dataDir, "/files?path=&depth=1");
    const history = await latencies(m.dataDir, `/files/${encodeURIComponent(sample)}/history`);

    // The others: copies of the synced replica, each under a sandbox id of its own, so the
    // master holds ten connected and synced replicas without serving nine more initial
    // syncs (on a shared 2-core machine those take long; one sync's peak is measured above).
    progress(
      `first replica synced in ${formatNumber(syncMs)} ms; master ${figure(whileOne)}; ` +
        `replica ${figure(replicaSyncPeak)} at most while syncing, ${
          figure(firstReplica.peak)
        } at most until idle ${formatNumber(afterSyncMs)} ms later: ${firstReplica.peakBreakdown}`,
    );
    await firstReplica.child.stop();
    // The master idle meanwhile; both copies are kept until the end (see `discard`).
    const rsyncAfter = await rsyncThenSync(master, `${base}/rsync-after`);
    // A second round, between the rsync run above and one more: the disk's speed swings
    // from minute to minute, so each sync is compared with the rsync runs on either side.
    const second = await Deno.makeTempDir({ dir: base, prefix: "replica-second-" });
    const secondStart = performance.now();
    const secondReplica = spawn(second, ["--connect", `${m.dataDir}/chronicle.sock`, "--quiet"]);
    await waitSynced([secondReplica], sequence, m);
    const secondMs = performance.now() - secondStart;
    await secondReplica.child.stop();
    const rsyncLast = await rsyncThenSync(master, `${base}/rsync-last`);
    progress(`second replica synced in ${formatNumber(secondMs)} ms`);
    const others: Probed[] = [];
    for (let i = 0; i < replicas; i++) {
      const folder = `${base}/replica-${i}`;
      if (!(await runPeer("cp", ["-a", first, folder]))) throw new Error("cp -a failed");
      await Deno.remove(`${folder}/.chronicle/control.sock`).catch(() => {});
      others.push(
        spawn(folder, [
          "--connect",
          `${m.dataDir}/chronicle.sock`,
          "--sandbox-id",
          `scale-replica-${i}`,
          "--quiet",
        ]),
      );
    }
    m.peak = { rss: 0, heap: 0 };
    const manyStart = performance.now();
    await waitSynced(others, sequence, m);
    const manyMs = performance.now() - manyStart;
    const whileMany = m.peak;
    const connected = await settled(m);
    const replicaPeak = [firstReplica, secondReplica, ...others].reduce(
      (most, r) => r.peak.rss > most.rss ? r.peak : most,
      { rss: 0, heap: 0 },
    );

    const masterCollected = keeperOn ? await heapCollections(m) : keeperOff;
    const ratio = rsyncBefore === null || rsyncAfter === null || rsyncLast === null
      ? peerUnavailable("rsync")
      : roundsAgainstRsync([syncMs, secondMs], [rsyncBefore, rsyncAfter, rsyncLast]);
    return [
      ...(v8Flags === "" ? [] : [`scale: every chronicle process ran with --v8-flags=${v8Flags}`]),
      `scale (${formatNumber(files)} files of 200 B–6 KiB, ${formatMiB(bytes)}, ${
        formatMiB(onDisk)
      } on disk): master initial scan ${formatNumber(scanMs)} ms; initial sync ${ratio}`,
      `  ${replicas} copies of the synced replica connected and caught up in ${
        formatNumber(manyMs)
      } ms`,
      `  ls of the top folder p50 ${
        formatNumber(percentile(ls, 50), 1)
      } ms; history of a file p50 ${
        formatNumber(percentile(history, 50), 1)
      } ms (control socket, 20 requests each)`,
      `  RSS (V8 heap in use): master ${figure(idle)} idle, ${
        figure(whileOne)
      } at most while one replica syncs, ${figure(whileMany)} at most while ${replicas} ` +
      `connect, ${figure(connected)} with ${replicas} replicas connected and synced; ` +
      `replica ${figure(replicaPeak)} at most (aim: master under 200 MiB with 10 replicas, ` +
      `replica under 150 MiB)`,
      `  the first replica: ${figure(replicaSyncPeak)} at most while syncing, ${
        figure(firstReplica.peak)
      } at most with the scan after its catch-up (idle ${formatNumber(afterSyncMs)} ms after); ` +
      collected,
      `  the first replica at its peak: ${firstReplica.peakBreakdown}`,
      `  the master, from its start to the end: ${masterCollected}`,
    ];
  } finally {
    await Promise.all(children.map((child) => child.stop()));
    await discard(base);
  }
}

/**
 * Interleaved rounds against `rsync -a` then `sync`: each sync (`syncs[i]`) ran between
 * `rsyncs[i]` and `rsyncs[i + 1]`, and is compared with their mean.
 */
function roundsAgainstRsync(syncs: number[], rsyncs: number[]): string {
  const ratios = syncs.map((ms, i) => 2 * ms / (rsyncs[i]! + rsyncs[i + 1]!));
  const mean = ratios.reduce((sum, ratio) => sum + ratio, 0) / ratios.length;
  const list = (values: number[], unit = " ms") =>
    values.map((value) => formatNumber(value)).join(", ") + unit;
  return `${list(syncs)} in ${syncs.length} rounds, rsync -a then sync ${
    list(rsyncs)
  } before, between and after them (Chronicle ${
    ratios.map((ratio) => `${formatNumber(ratio, 2)}x`).join(" and ")
  } the mean of the rsync runs on either side; ${formatNumber(mean, 2)}x on average)`;
}

/** The V8 flags the binaries ship with, as one `--v8-flags=` value. */
function shippedV8Flags(): string {
  return BINARY_V8_FLAGS.map((flag) => flag.replace(/^--v8-flags=/, "")).join(",");
}

/** A count from the environment variable `name`, or `undefined` when it is not set. */
function countFromEnv(name: string): number | undefined {
  const text = Deno.env.get(name);
  if (text === undefined || text === "") return undefined;
  const count = Number(text);
  if (!Number.isInteger(count) || count < 0) {
    throw new TypeError(`${name} must be a whole number, not "${text}"`);
  }
  return count;
}

/** A phase's figures on stderr as it ends: a long run shows where it is. */
function progress(line: string): void {
  console.error(`scale_bench: ${line}`);
}

function figure(memory: MemoryFigure): string {
  return `${formatMiB(memory.rss)} (${formatMiB(memory.heap)})`;
}

/** Reads a process's memory, raising its peak. */
function sampleMemory(process: Probed): MemoryFigure {
  const now = {
    rss: processRssBytes(process.child.process.pid),
    heap: readMemorySample(process.probe)?.heapUsed ?? 0,
  };
  if (now.rss > process.peak.rss) {
    process.peak = now;
    if (process.peakBreakdown !== undefined) process.peakBreakdown = breakdown(process);
  }
  return now;
}

/**
 * Where a process's memory is, from `/proc/PID/smaps_rollup` and `smaps` and its probe:
 * anonymous memory (and of it the allocator's main heap, `[heap]`) against file-backed
 * (the `deno` binary, mostly), and the V8 heap reserved and in use, and array buffers.
 */
function breakdown(process: Probed): string {
  try {
    const pid = process.child.process.pid;
    const kib = (text: string, field: string) =>
      Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? "0") * 1024;
    const rollup = Deno.readTextFileSync(`/proc/${pid}/smaps_rollup`);
    const smaps = Deno.readTextFileSync(`/proc/${pid}/smaps`);
    const dump = Deno.env.get("CHRONICLE_SCALE_SMAPS");
    if (dump) Deno.writeTextFileSync(dump, smaps);
    const heapAt = smaps.indexOf(" [heap]\n");
    const mallocHeap = heapAt < 0 ? 0 : kib(smaps.slice(heapAt), "Rss");
    const v8 = readMemorySample(process.probe);
    const malloc = v8?.malloc === undefined
      ? ""
      : `; malloc ${formatMiB(v8.malloc.inUse)} in use, ${formatMiB(v8.malloc.free)} free but kept`;
    return `anonymous ${formatMiB(kib(rollup, "Anonymous"))} (malloc's main heap ${
      formatMiB(mallocHeap)
    }, V8's pages ${formatMiB(v8Pages(smaps))}), file-backed ${
      formatMiB(kib(rollup, "Rss") - kib(rollup, "Anonymous"))
    }; V8 heap ${formatMiB(v8?.heapTotal ?? 0)} reserved, ${
      formatMiB(v8?.heapUsed ?? 0)
    } in use; array buffers ${formatMiB(v8?.external ?? 0)}${malloc}`;
  } catch (error) {
    return `unavailable (${error instanceof Error ? error.message : String(error)})`;
  }
}

/**
 * Resident bytes of anonymous mappings of exactly 256 KiB: V8's heap pages (its regular page
 * size), which V8 may keep resident beyond the heap it reports (pages it freed, pooled).
 */
function v8Pages(smaps: string): number {
  let total = 0;
  const mapping =
    /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ 0 *\n(?:(?![0-9a-f]+-)[^\n]*\n)*?Rss:\s+(\d+) kB/gm;
  for (const match of smaps.matchAll(mapping)) {
    if (parseInt(match[2]!, 16) - parseInt(match[1]!, 16) === 256 * 1024) {
      total += Number(match[3]) * 1024;
    }
  }
  return total;
}

/** A process's memory after it was left alone for {@linkcode SETTLE_MS}. */
async function settled(process: Probed): Promise<MemoryFigure> {
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  const dump = Deno.env.get("CHRONICLE_SCALE_SMAPS");
  if (dump) {
    const smaps = Deno.readTextFileSync(`/proc/${process.child.process.pid}/smaps`);
    Deno.writeTextFileSync(`${dump}.settled.${Date.now()}`, smaps);
  }
  return sampleMemory(process);
}

/** Waits until every replica applied `sequence`, sampling everyone's memory meanwhile. */
async function waitSynced(replicas: Probed[], sequence: number, master: Probed): Promise<void> {
  const done = new Set<Probed>();
  await waitFor(
    `${replicas.length} replica(s) to apply sequence ${sequence}`,
    async () => {
      sampleMemory(master);
      for (const replica of replicas) {
        sampleMemory(replica);
        if (done.has(replica)) continue;
        const status = await controlJson(replica.dataDir, "/sync/status").catch(() => null);
        const body = (status?.body as { appliedSequence?: number } | undefined) ?? {};
        if ((body.appliedSequence ?? 0) >= sequence) done.add(replica);
      }
      return done.size === replicas.length;
    },
    { timeoutMs: PHASE_TIMEOUT_MS, intervalMs: 100 },
  ).catch((error) => {
    const stuck = replicas.find((replica) => !done.has(replica));
    throw new Error(`${error.message}; a replica wrote: ${stuck?.child.output().slice(-2000)}`);
  });
}

/** How long, at most, a process may stay busy after its sync before the run fails. */
const IDLE_TIMEOUT_MS = 600_000;
/** A window of this long in which a process used under 5% of a core is idle. */
const IDLE_WINDOW_MS = 1_000;

/**
 * Samples a process's memory until it is idle (under 5% of a core for
 * {@linkcode IDLE_WINDOW_MS}, from its CPU time in `/proc`): what it does after its sync
 * (a replica's scan of what it wrote) counts in its peak.
 *
 * @returns How long after the call it became idle, in ms.
 */
async function untilIdle(process: Probed): Promise<number> {
  const start = performance.now();
  let windowStart = performance.now();
  let cpuAtWindowStart = cpuMs(process.child);
  await waitFor(
    "the replica to be idle after its sync",
    () => {
      sampleMemory(process);
      const now = performance.now();
      if (now - windowStart < IDLE_WINDOW_MS) return false;
      const used = cpuMs(process.child) - cpuAtWindowStart;
      if (used < (now - windowStart) * 0.05) return true;
      windowStart = now;
      cpuAtWindowStart = cpuMs(process.child);
      return false;
    },
    { timeoutMs: IDLE_TIMEOUT_MS, intervalMs: 100 },
  );
  return performance.now() - start - IDLE_WINDOW_MS;
}

/** A process's CPU time (user and system) from `/proc/PID/stat`, in ms. */
function cpuMs(child: Child): number {
  const stat = Deno.readTextFileSync(`/proc/${child.process.pid}/stat`);
  // The fields after the command's name (in parentheses, which may hold spaces).
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime
  return ticks * 10; // USER_HZ is 100 on Linux
}

/** Bytes the files under `root` take on disk (their blocks). */
function diskUsage(root: string): number {
  let total = 0;
  const folders = [root];
  while (folders.length > 0) {
    const folder = folders.pop()!;
    for (const entry of Deno.readDirSync(folder)) {
      const path = `${folder}/${entry.name}`;
      if (entry.isDirectory) folders.push(path);
      total += (Deno.lstatSync(path).blocks ?? 0) * 512;
    }
  }
  return total;
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

/**
 * What the heap keeper (lib/memory) did in a process so far, from its `/metrics`: how many
 * collections, and their time.
 */
async function heapCollections(process: Probed): Promise<string> {
  const families = parsePrometheusText(
    await (await controlFetch(process.dataDir, "/metrics")).text(),
  );
  const value = (name: string) => families.get(name)?.samples[0]?.value ?? NaN;
  const count = value("chronicle_heap_collections_total");
  const ms = value("chronicle_heap_collection_seconds_total") * 1000;
  const times = count === 1 ? "once" : `${formatNumber(count)} times`;
  return count > 0
    ? `its heap collected ${times} by the heap keeper, ${formatNumber(ms)} ms in all`
    : "its heap never collected by the heap keeper";
}

/**
 * `rsync -a` of the tree then `sync`, in ms, or `null` without rsync. The master's data
 * folder is left out: a copy of the workspace's files only, as the replica gets.
 */
async function rsyncThenSync(source: string, target: string): Promise<number | null> {
  const start = performance.now();
  const copy = ["-a", "--exclude=/.chronicle/", `${source}/`, `${target}/`];
  if (!(await runPeer("rsync", copy))) return null;
  await syncDisks();
  const ms = performance.now() - start;
  await discard(target);
  return ms;
}

if (import.meta.main) {
  for (const line of await run(quickMode())) console.log(line);
}
