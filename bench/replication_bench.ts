/**
 * Replication benchmark, master → replica, with master and replica as separate
 * processes (the test runners `tests/replication/_master.ts` and `_replica.ts`):
 *
 * - initial sync of a tree over a Unix socket, against `tar -c | tar -x` through a pipe
 *   and `rsync -a` of the same tree, measured in the same run, and against the least a
 *   Deno process does to copy that tree as durably (a floor for the design, no peer);
 * - propagation latency from a write on the master's disk to the file on the replica's
 *   disk, p50 and p99, over a Unix socket and over WebSocket;
 * - bytes sent when one byte of a large file changes (counted by a proxy);
 * - the master's memory (RSS) with replicas connected.
 *
 * `CHRONICLE_BENCH_QUICK=1` (or `--quick`) runs tiny sizes in a few seconds. `--profile`
 * runs only the initial syncs, master and replicas under Deno's `--cpu-prof`, and prints
 * where their CPU time went (the master's counted during the syncs only, the replicas'
 * from their start until synced); `--profile=DIR` also keeps the `.cpuprofile` files in
 * DIR. `--corpus NAME` (synthetic, realistic, npm) keeps one corpus.
 *
 * Master and replicas run with the binaries' V8 flags (`BINARY_V8_FLAGS`).
 *
 * Run: `deno run -A bench/replication_bench.ts [--quick] [--profile[=DIR]] [--corpus NAME]`
 *
 * @module
 */
import {
  benchCorpora,
  type Corpus,
  discard,
  durableCopy,
  durableWriteFloor,
  endedChildrenCpuMs,
  formatMiB,
  formatNumber,
  latencyLine,
  listTree,
  makeTree,
  MiB,
  peerUnavailable,
  percentile,
  processCpuMs,
  processRssBytes,
  processWrittenBytes,
  propagationLatency,
  quickMode,
  runPeer,
  startBinaryPeer,
  syncDisks,
  timeMs,
} from "./_lib/mod.ts";
import { profileLines, ProfileSession } from "./_lib/cpu_profile.ts";
import { CuttingProxy } from "../tests/replication/_cutting_proxy.ts";
import { waitFor } from "../tests/_helpers/wait_for.ts";
import { readText } from "../tests/_helpers/temp_dir.ts";
import { lstatOrNull } from "../lib/disk/mod.ts";
import {
  type Peer,
  pseudoRandomBytes,
  replicaStatus,
  waitForSameTrees,
} from "../tests/replication/_harness.ts";
import type { MasterStatus } from "../lib/replication/mod.ts";

/** How long the initial sync of the full-size tree may take before the run fails. */
const INITIAL_SYNC_TIMEOUT_MS = 300_000;

/** Sizes for one run. */
interface Sizes {
  treeFiles: number;
  /** Rounds of the initial sync and its peers, interleaved: medians are compared. */
  syncRounds: number;
  latencyWrites: number;
  bigFileBytes: number;
  replicas: number;
}

const FULL: Sizes = {
  treeFiles: 10_000,
  syncRounds: 3,
  latencyWrites: 1000,
  bigFileBytes: 100 * MiB,
  replicas: 10,
};
const QUICK: Sizes = {
  treeFiles: 200,
  syncRounds: 1,
  latencyWrites: 30,
  bigFileBytes: 6 * MiB,
  replicas: 2,
};

/** What to run besides the size. */
export interface RunOptions {
  /**
   * Profile the initial syncs, and run nothing else; a folder keeps the `.cpuprofile` files
   * (for Chrome's DevTools), one subfolder per corpus. @default {false}
   */
  profile?: boolean | string;
  /** Only this corpus's initial sync (`synthetic`, `realistic`, `npm`). @default {undefined} */
  corpus?: string;
  /** Functions listed per ranking of a profile. @default {15} */
  profileTop?: number;
}

/**
 * Runs the benchmark.
 *
 * @param quick Tiny sizes.
 * @param options Profiling, one corpus.
 * @returns Printable result lines.
 */
export async function run(quick: boolean, options: RunOptions = {}): Promise<string[]> {
  const sizes = quick ? QUICK : FULL;
  const lines: string[] = [];
  const base = await Deno.makeTempDir({ prefix: "chronicle-repl-bench-" });
  try {
    lines.push(await durableWriteFloor(await fresh(base, "fsync")));
    const chosen = corpora(sizes).filter((c) => !options.corpus || c.name === options.corpus);
    if (chosen.length === 0) throw new TypeError(`No corpus is named "${options.corpus}"`);
    for (const corpus of chosen) {
      const profile = options.profile
        ? new ProfileSession(
          typeof options.profile === "string"
            ? await Deno.makeTempDir({ dir: options.profile, prefix: `${corpus.name}-` })
            : await fresh(base, `profile-${corpus.name}`),
        )
        : undefined;
      lines.push(...await initialSync(base, sizes, corpus, profile));
      if (profile) {
        const top = options.profileTop;
        lines.push(
          ...profileLines("master during the syncs", await profile.summary("master"), top),
          ...profileLines("replicas until synced", await profile.summary("replica-"), top),
        );
      }
    }
    if (options.profile || options.corpus) return lines;
    lines.push(...await latency(base, sizes, "unix"));
    lines.push(...await latency(base, sizes, "websocket"));
    lines.push(...await oneByteChange(base, sizes));
    lines.push(...await masterMemory(base, sizes));
  } finally {
    await discard(base);
  }
  return lines;
}

function masterArgs(root: string, socket: string, extra: string[] = []): string[] {
  return ["--root", root, "--socket", socket, ...extra];
}

async function fresh(base: string, name: string): Promise<string> {
  const dir = `${base}/${name}`;
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  await Deno.mkdir(dir, { recursive: true });
  return dir;
}

/**
 * Initial sync of a tree over a Unix socket, against tar through a pipe and rsync: in
 * interleaved rounds, each tool's median compared, since this disk's speed drifts over
 * minutes. Every copy goes to a new folder: deleting thousands of files right before a
 * measurement slows file creation for minutes (see `discard`).
 */
async function initialSync(
  base: string,
  sizes: Sizes,
  corpus: Corpus,
  profile?: ProfileSession,
): Promise<string[]> {
  const source = await fresh(base, `tree-${corpus.name}`);
  if (!(await corpus.build(source))) {
    return [`initial sync of the ${corpus.name} corpus: unavailable (${corpus.unavailable})`];
  }
  const entries = await listTree(source);
  const files = entries.filter((entry) => entry.kind === "file");
  const bytes = files.reduce((sum, f) => sum + f.size, 0);
  const label = `${corpus.name}: ${formatNumber(files.length)} files, ${
    formatNumber(entries.length - files.length)
  } folders and links, ${formatMiB(bytes)}`;
  const perThousand = 1000 / Math.max(1, entries.length);
  const cpu = { master: [] as number[], replica: [] as number[], rsync: [] as number[] };
  /** Bytes each sync's replica wrote to storage (null: the kernel does not count them). */
  const written: (number | null)[] = [];
  /** Bytes each durable copy (the floor) wrote, counted the same way. */
  const floorWritten: (number | null)[] = [];
  const times = {
    chronicle: [] as number[],
    /** Of each sync, the replica process starting until ready. */
    start: [] as number[],
    /** A write on the master right after each sync, until it is on the replica's disk. */
    afterSync: [] as number[],
    tar: [] as number[],
    rsync: [] as number[],
    floor: [] as number[],
  };
  const rsyncDurable: number[] = [];
  let tarOk = true;
  let rsyncOk = true;
  // The master scans the tree before it listens: that is not part of the sync.
  const master = await startBinaryPeer(
    "master",
    "_master.ts",
    masterArgs(source, `${base}/sync.sock`),
    profile?.flags("master"),
  );
  try {
    for (let round = 0; round < sizes.syncRounds; round++) {
      const tarTarget = await fresh(base, `tar-${round}`);
      await syncDisks();
      times.tar.push(
        await timeMs(async () => {
          tarOk &&= await runPeer("bash", [
            "-c",
            `tar -C '${source}' -cf - . | tar -C '${tarTarget}' -xf -`,
          ]).catch(() => false);
        }),
      );
      await syncDisks();
      const rsyncTarget = await fresh(base, `rsync-${round}`);
      const rsyncCpuBefore = await endedChildrenCpuMs();
      const start = performance.now();
      rsyncOk &&= await runPeer("rsync", ["-a", `${source}/`, `${rsyncTarget}/`]);
      times.rsync.push(performance.now() - start);
      cpu.rsync.push((await endedChildrenCpuMs() - rsyncCpuBefore) * perThousand);
      // rsync does not fsync; Chronicle makes every file durable before it records it.
      await syncDisks(); // also leaves nothing unwritten to slow the sync below
      rsyncDurable.push(performance.now() - start);
      // Each round's sync runs to the master's latest sequence (the last round wrote one).
      const { sequence } = await master.command<{ sequence: number }>("settle");
      const masterCpuBefore = await cpuMs(master);
      const syncStart = performance.now();
      const synced = await replicaSync(base, source, master, sequence, round, profile);
      profile?.window("master", syncStart, syncStart + synced.ms);
      cpu.master.push((await cpuMs(master) - masterCpuBefore) * perThousand);
      cpu.replica.push(synced.cpuMs * perThousand);
      times.chronicle.push(synced.ms);
      times.start.push(synced.startMs);
      times.afterSync.push(synced.nextWriteMs);
      written.push(synced.writtenBytes);
      await syncDisks();
      const floorTarget = await fresh(base, `floor-${round}`);
      const floorWrittenBefore = await processWrittenBytes(Deno.pid);
      times.floor.push(await timeMs(() => durableCopy(source, floorTarget, entries)));
      const floorWrittenAfter = await processWrittenBytes(Deno.pid);
      floorWritten.push(
        floorWrittenBefore === null || floorWrittenAfter === null
          ? null
          : floorWrittenAfter - floorWrittenBefore,
      );
    }
  } finally {
    await master.stop();
  }
  const median = (samples: number[]) => percentile(samples, 50);
  const ms = median(times.chronicle);
  const rounds = (samples: number[]) =>
    samples.length > 1 ? ` (rounds: ${samples.map((t) => formatNumber(t)).join(", ")})` : "";
  const versus = (name: string, samples: number[]) => {
    const peer = median(samples);
    return `${formatNumber(peer)} ms${rounds(samples)} (Chronicle ${
      formatNumber(ms / peer, 2)
    }x ${name}'s time)`;
  };
  return [
    `initial sync over a Unix socket (${label}): ${formatNumber(ms)} ms${
      rounds(times.chronicle)
    }, of which the replica process starting until ready: ${formatNumber(median(times.start))} ms`,
    tarOk
      ? `  tar -c | tar -x through a pipe: ${versus("tar", times.tar)}`
      : `  tar pipe: ${peerUnavailable("tar")}`,
    rsyncOk
      ? `  rsync -a: ${versus("rsync", times.rsync)}; rsync -a then sync, durable like Chronicle: ${
        versus("rsync then sync", rsyncDurable)
      }`
      : `  rsync: ${peerUnavailable("rsync")}`,
    `  the least a Deno process does for the same durable copy (read, write to a temp name, ` +
    `rename; one sync -f; no record kept, no process started): ${versus("that copy", times.floor)}`,
    `  CPU time (user + system) per 1,000 entries: master ${
      formatNumber(median(cpu.master), 1)
    } ms, replica ${formatNumber(median(cpu.replica), 1)} ms (its start included)${
      rsyncOk ? `; rsync -a ${formatNumber(median(cpu.rsync), 1)} ms (its processes together)` : ""
    }`,
    writtenLine(written, floorWritten, bytes),
    `  a write on the master right after the sync, on the replica's disk in ${
      formatNumber(median(times.afterSync), 1)
    } ms${rounds(times.afterSync)} (the scan that follows a large catch-up runs meanwhile)`,
  ];
}

/**
 * One initial sync: a new replica started until it has applied `sequence` (`ms`), then
 * how long a write on the master takes to reach it right after (`nextWriteMs`).
 */
async function replicaSync(
  base: string,
  source: string,
  master: Peer,
  sequence: number,
  round: number,
  profile?: ProfileSession,
): Promise<
  { ms: number; startMs: number; nextWriteMs: number; cpuMs: number; writtenBytes: number | null }
> {
  const target = await fresh(base, `replica-${round}`); // the disks were just flushed
  const start = performance.now();
  const replica = await startBinaryPeer(
    "replica",
    "_replica.ts",
    ["--root", target, "--connect", `${base}/sync.sock`],
    profile?.flags(`replica-${round}`),
  );
  const startMs = performance.now() - start;
  try {
    // Polled cheaply through the replica's status; trees are compared once afterwards.
    await waitFor(
      `the replica to apply sequence ${sequence}`,
      async () => (await replicaStatus(replica)).appliedSequence >= sequence,
      { timeoutMs: INITIAL_SYNC_TIMEOUT_MS, intervalMs: 20 },
    );
    const ms = performance.now() - start;
    profile?.window(`replica-${round}`, start, start + ms);
    const replicaCpuMs = await cpuMs(replica);
    const writtenBytes = await processWrittenBytes(replica.info.pid as number);
    const nextWriteMs = await nextWrite(source, target, round);
    await waitForSameTrees([source, target], { peers: [master, replica] });
    return { ms, startMs, nextWriteMs, cpuMs: replicaCpuMs, writtenBytes };
  } finally {
    await replica.stop();
  }
}

/**
 * How long a file written on the master takes to be on the replica's disk, in ms; the
 * file is then removed again on both, so the tree stays the same for the next round.
 */
async function nextWrite(source: string, target: string, round: number): Promise<number> {
  const name = "written-after-the-sync.txt";
  const content = `round ${round}`;
  const start = performance.now();
  await Deno.writeTextFile(`${source}/${name}`, content);
  await waitFor(
    "the write after the sync on the replica",
    async () => (await readText(`${target}/${name}`)) === content,
    { timeoutMs: INITIAL_SYNC_TIMEOUT_MS, intervalMs: 1 },
  );
  const ms = performance.now() - start;
  await Deno.remove(`${source}/${name}`);
  await waitFor(
    "its removal on the replica",
    async () => (await lstatOrNull(`${target}/${name}`)) === null,
    { timeoutMs: INITIAL_SYNC_TIMEOUT_MS },
  );
  return ms;
}

/** Master-disk to replica-disk latency over one transport. */
async function latency(
  base: string,
  sizes: Sizes,
  transport: "unix" | "websocket",
): Promise<string[]> {
  const m = await fresh(base, `lat-m-${transport}`);
  const r = await fresh(base, `lat-r-${transport}`);
  const socket = `${base}/lat-${transport}.sock`;
  const ws = transport === "websocket" ? ["--ws", "127.0.0.1:0"] : [];
  const master = await startBinaryPeer(
    "master",
    "_master.ts",
    masterArgs(m, socket, ["--debounce", "1", ...ws]),
  );
  const connect = transport === "websocket"
    ? ["--ws-connect", `ws://127.0.0.1:${master.info.wsPort}/`]
    : ["--connect", socket];
  const replica = await startBinaryPeer("replica", "_replica.ts", ["--root", r, ...connect]);
  try {
    await replica.command("sync-wait 20000");
    // Data earlier benchmarks left unwritten would slow every fsync measured here.
    await syncDisks();
    const summary = await propagationLatency(m, r, sizes.latencyWrites);
    return [latencyLine(`propagation latency, master disk → replica disk, ${transport}`, summary)];
  } finally {
    await replica.stop();
    await master.stop();
  }
}

/** Bytes crossing the connection when one byte of a large file changes. */
async function oneByteChange(base: string, sizes: Sizes): Promise<string[]> {
  const m = await fresh(base, "big-m");
  const r = await fresh(base, "big-r");
  const content = pseudoRandomBytes(sizes.bigFileBytes, 99);
  await Deno.writeFile(`${m}/big.bin`, content);
  const socket = `${base}/big.sock`;
  const master = await startBinaryPeer("master", "_master.ts", masterArgs(m, socket));
  const proxy = CuttingProxy.start({
    listen: `${base}/big-proxy.sock`,
    upstream: socket,
    seed: 1,
    maxBytes: 1,
  });
  proxy.cutting = false;
  const replica = await startBinaryPeer("replica", "_replica.ts", [
    "--root",
    r,
    "--connect",
    `${base}/big-proxy.sock`,
  ]);
  try {
    await waitForSameTrees([m, r], { peers: [master, replica], timeoutMs: 300_000 });
    const before = proxy.bytes;
    const file = await Deno.open(`${m}/big.bin`, { write: true });
    await file.seek(Math.floor(sizes.bigFileBytes / 2), Deno.SeekMode.Start);
    await file.write(new Uint8Array([content[Math.floor(sizes.bigFileBytes / 2)]! ^ 0xff]));
    file.close();
    await waitForSameTrees([m, r], { peers: [master, replica], timeoutMs: 300_000 });
    const sent = proxy.bytes - before;
    return [
      `bytes sent for a one-byte change in a ${formatMiB(sizes.bigFileBytes, 0)} file: ${
        formatMiB(sent, 2)
      } (${formatNumber((sent / sizes.bigFileBytes) * 100, 2)}% of the file)`,
    ];
  } finally {
    await replica.stop();
    proxy.close();
    await master.stop();
  }
}

/** The master's resident memory with replicas connected. */
async function masterMemory(base: string, sizes: Sizes): Promise<string[]> {
  const m = await fresh(base, "mem-m");
  await makeTree(m, { files: Math.min(sizes.treeFiles, 1000), seed: 3, maxSize: 8192 });
  const socket = `${base}/mem.sock`;
  const master = await startBinaryPeer("master", "_master.ts", masterArgs(m, socket));
  const replicas: Peer[] = [];
  try {
    const idle = processRssBytes(master.info.pid as number);
    for (let i = 0; i < sizes.replicas; i++) {
      const r = await fresh(base, `mem-r${i}`);
      replicas.push(
        await startBinaryPeer(`replica-${i}`, "_replica.ts", ["--root", r, "--connect", socket]),
      );
    }
    await Promise.all(replicas.map((replica) => replica.command("sync-wait 120000", 180_000)));
    const status = await master.command<MasterStatus>("status");
    const connected = status.replicas.filter((s) => s.connected).length;
    // Churn while they are all connected: every replica gets every change.
    for (let i = 0; i < 200; i++) {
      await Deno.writeTextFile(`${m}/churn-${i % 20}.txt`, `churn ${i}`);
    }
    await master.command("settle");
    await Promise.all(replicas.map((replica) => replica.command("sync-wait 120000", 180_000)));
    const loaded = processRssBytes(master.info.pid as number);
    return [
      `master memory: ${formatMiB(idle)} RSS with no replica, ${
        formatMiB(loaded)
      } with ${connected} replicas connected and synced`,
    ];
  } finally {
    await Promise.all(replicas.map((replica) => replica.stop()));
    await master.stop();
  }
}

/**
 * What the replicas of the syncs wrote to storage (workspace, store, CAS and their logs),
 * against what the durable copy wrote, counted the same way (pages dirtied: a file of a
 * few hundred bytes counts a whole page in both).
 */
function writtenLine(
  written: (number | null)[],
  floorWritten: (number | null)[],
  fileBytes: number,
): string {
  const median = (samples: (number | null)[]) => {
    const counted = samples.filter((bytes): bytes is number => bytes !== null);
    return counted.length === 0 ? null : percentile(counted, 50);
  };
  const replica = median(written);
  const floor = median(floorWritten);
  if (replica === null || floor === null) {
    return "  written to storage by the replica: not counted by this kernel";
  }
  const ratio = formatNumber(replica / Math.max(1, floor), 2);
  const files = formatMiB(fileBytes);
  return `  written to storage by the replica until synced: ${formatMiB(replica)}; by the ` +
    `durable copy: ${formatMiB(floor)} (Chronicle ${ratio}x; the files hold ${files})`;
}

/** The corpora of a run's size. */
function corpora(sizes: Sizes): Corpus[] {
  return benchCorpora(sizes.treeFiles, sizes === QUICK);
}

/** CPU time (user + system) the peer's process has used so far, in ms. */
function cpuMs(peer: Peer): Promise<number> {
  return processCpuMs(peer.info.pid as number);
}

if (import.meta.main) {
  const corpusAt = Deno.args.indexOf("--corpus");
  const corpus = corpusAt >= 0 ? Deno.args[corpusAt + 1] : undefined;
  const kept = Deno.args.find((arg) => arg.startsWith("--profile="))?.slice(10);
  const profile = kept ?? Deno.args.includes("--profile");
  if (kept) await Deno.mkdir(kept, { recursive: true });
  const options = { profile, ...(corpus ? { corpus } : {}) };
  for (const line of await run(quickMode(), options)) console.log(line);
}
