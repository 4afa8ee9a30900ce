/**
 * Store benchmark (issue 2): what recording costs, against git as used by shadow-git
 * checkpoint tools, measured in the same run on identical trees.
 *
 * 1. Initial scan of a source-like tree (nested folders, 8 B to 64 KiB files, fixed seed):
 *    `Workspace.open` + `scan()` on a fresh data folder, against `git init && git add -A &&
 *    git commit` on an identical copy, with git's default durability (loose objects are not
 *    fsynced) and with `core.fsync=all` (each object fsynced, its folder not).
 * 2. Single-file edits recorded one at a time: write-through (`writeBytes`), and capture
 *    (a plain disk write, recorded by the watcher), against a disk write + `git add -A &&
 *    git commit` per edit in the git copy. Each edit changes 1 to 8 bytes of another file.
 * 3. Latency of single small writes, p50/p99: `writeBytes` call to iteration returned, and
 *    disk write to iteration visible through the watcher; in the scanned workspace and in
 *    an empty one, which shows what grows with the number of files.
 * 4. Storage for many small edits of one 10 MiB file (5 MiB in quick mode) against full
 *    copies.
 *
 * The scan and edit phases start after `sync`, so they do not pay for earlier writes.
 * Benchmarks print; they assert only that what was written was recorded.
 * `CHRONICLE_BENCH_QUICK=1` (or `--quick`) runs tiny sizes in a few seconds.
 *
 * Run: `deno run -A bench/store_bench.ts`
 *
 * @module
 */
import { join } from "node:path";
import { sha256Hex } from "../lib/cas/mod.ts";
import { isFolderMode } from "../lib/store/mod.ts";
import { Workspace } from "../lib/workspace/mod.ts";
import {
  discard,
  formatMiB,
  formatNumber,
  type LatencySummary,
  makeTree,
  MiB,
  peerAvailable,
  peerUnavailable,
  Prng,
  quickMode,
  rateRatio,
  runPeer,
  sizeRatio,
  summarize,
  syncDisks,
  timeMs,
  type TreeFile,
} from "./_lib/mod.ts";

/** The sizes of one run. */
interface Sizes {
  /** Files in the scanned tree. */
  files: number;
  /** Edits recorded one at a time, per path (write-through, capture, git). */
  edits: number;
  /** Latency samples per path. */
  samples: number;
  /** The large file of the storage phase. */
  bigFileBytes: number;
  /** Edits of the large file. */
  bigFileEdits: number;
}

const FULL: Sizes = {
  files: 10_000,
  edits: 1_000,
  samples: 500,
  bigFileBytes: 10 * MiB,
  bigFileEdits: 100,
};
// The large file stays above the CAS chunking threshold (4 MiB) so quick mode still
// exercises chunked storage.
const QUICK: Sizes = { files: 300, edits: 30, samples: 50, bigFileBytes: 5 * MiB, bigFileEdits: 5 };

/** Watcher quiet time used by the capture phases. */
const DEBOUNCE_MS = 2;
/** Longest wait for one change to be recorded before the benchmark fails. */
const RECORD_TIMEOUT_MS = 20_000;
/** Untimed operations before each latency series (JIT, caches). */
const WARM_UP = 5;
const SEED = 20_251_122;

const GIT_ENV = {
  GIT_AUTHOR_NAME: "bench",
  GIT_AUTHOR_EMAIL: "bench@localhost",
  GIT_COMMITTER_NAME: "bench",
  GIT_COMMITTER_EMAIL: "bench@localhost",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
};
/** No signing, and no automatic gc in the background of later phases. */
const GIT_FLAGS = ["-c", "commit.gpgsign=false", "-c", "gc.auto=0", "-c", "maintenance.auto=false"];
/** Git made as durable as Chronicle: every object, the index and refs fsynced. */
const GIT_FSYNC_FLAGS = ["-c", "core.fsync=all", "-c", "core.fsyncMethod=fsync"];

/**
 * Runs the benchmark.
 *
 * @param quick Tiny sizes (a few seconds), for CI.
 * @returns Printable result lines.
 */
export async function run(quick: boolean): Promise<string[]> {
  const sizes = quick ? QUICK : FULL;
  const lines: string[] = [];
  const dir = await Deno.makeTempDir({ prefix: "chronicle_store_bench_" });
  let workspace: Workspace | undefined;
  try {
    const hasGit = await peerAvailable("git");
    const oursRoot = join(dir, "ours");
    const gitRoot = join(dir, "git");
    await Deno.mkdir(oursRoot);
    await Deno.mkdir(gitRoot);
    const files = await makeTree(oursRoot, { files: sizes.files, seed: SEED });
    if (hasGit) await makeTree(gitRoot, { files: sizes.files, seed: SEED });
    const treeBytes = files.reduce((sum, file) => sum + file.size, 0);
    const treeLabel = `${formatNumber(files.length)}-file workspace`;

    // 1. Initial scan, then git's first commit of the identical copy.
    await syncDisks();
    const scanMs = await timeMs(async () => {
      workspace = await Workspace.open({ root: oursRoot });
      const { recorded: all, problems } = await workspace.scan();
      // Folders are recorded too (docs/PROTOCOL.md §8): only files are counted here.
      const recorded = all.filter((iteration) => !isFolderMode(iteration.mode));
      if (recorded.length !== files.length || problems.length > 0) {
        throw new Error(
          `Scan recorded "${recorded.length}" of "${files.length}" files ` +
            `with "${problems.length}" problems`,
        );
      }
    });
    const ws = workspace!;
    const scanRate = files.length / (scanMs / 1000);
    lines.push(
      `initial scan of ${formatNumber(files.length)} files (${formatMiB(treeBytes)}): ` +
        `${formatNumber(scanMs)} ms, ${formatNumber(scanRate)} files/s`,
    );
    lines.push(...await gitInitialCommit(hasGit ? gitRoot : null, files.length, scanRate));

    // 2. Edits one at a time: other files for each path; git edits the same as write-through.
    const order = new Prng(SEED + 1).shuffled(files);
    const pick = (from: number) =>
      Array.from({ length: sizes.edits }, (_, i) => order[(from + i) % order.length]!);
    const editPrng = new Prng(SEED + 2);
    await syncDisks();
    const writeThrough = await series(pick(0), async (file) => {
      const edit = await editOf(oursRoot, file, editPrng);
      return () => expectHash(ws.writeBytes(file.path, edit), edit);
    });
    lines.push(editLine("write-through (writeBytes)", writeThrough));

    let gitEdits: LatencySummary | undefined;
    if (hasGit) {
      await syncDisks();
      gitEdits = await series(pick(0), async (file) => {
        const edit = await editOf(gitRoot, file, editPrng);
        return async () => {
          await Deno.writeFile(join(gitRoot, file.path), edit);
          await git(gitRoot, ["add", "-A"]);
          await git(gitRoot, ["commit", "-q", "-m", "edit"]);
        };
      });
      lines.push(editLine("git add -A + commit per edit", gitEdits));
    } else {
      lines.push(`edits one at a time, git add -A + commit per edit: ${peerUnavailable("git")}`);
    }

    // Small writes through the API before the watcher runs, so none of its work overlaps.
    const latencyPrng = new Prng(SEED + 3);
    const smallWrites = await writeThroughLatency(ws, sizes.samples, latencyPrng);

    await ws.watch({ debounceMs: DEBOUNCE_MS });
    await ws.settled();
    await syncDisks();
    const capture = await series(pick(sizes.edits), async (file) => {
      const edit = await editOf(oursRoot, file, editPrng);
      return () => writeAndAwaitCapture(ws, file.path, edit);
    }, () => ws.settled());
    lines.push(editLine(`capture (disk write + watcher, debounce ${DEBOUNCE_MS} ms)`, capture));
    if (gitEdits) {
      const gitRate = rate(gitEdits);
      lines.push(
        `  edits vs git per edit: write-through at ${
          rateRatio(rate(writeThrough), gitRate, "git")
        }, capture at ${rateRatio(rate(capture), gitRate, "git")} (aim >= 50x)`,
      );
    }

    // 3. Latency of single small writes, in this workspace and in an empty one.
    const watched = await watcherLatency(ws, sizes.samples, latencyPrng);
    await ws.close();
    workspace = undefined;
    lines.push(...latencyLines(treeLabel, smallWrites, watched));
    const emptyRoot = join(dir, "empty");
    await Deno.mkdir(emptyRoot);
    workspace = await Workspace.open({ root: emptyRoot });
    const emptyWrites = await writeThroughLatency(workspace, sizes.samples, latencyPrng);
    await workspace.watch({ debounceMs: DEBOUNCE_MS });
    await workspace.settled();
    const emptyWatched = await watcherLatency(workspace, sizes.samples, latencyPrng);
    await workspace.close();
    workspace = undefined;
    lines.push(...latencyLines("empty workspace", emptyWrites, emptyWatched));
    lines.push(`  aim: write-through p50 under 5 ms`);

    // 4. Storage for many small edits of one large file.
    lines.push(...await storage(join(dir, "storage"), sizes));
  } finally {
    await workspace?.close();
    await discard(dir);
  }
  return lines.map((line) => `store ${line}`);
}

/**
 * Times `git init && git add -A && git commit` of the tree at `gitRoot`, with git's
 * default durability and with every object fsynced, against Chronicle's scan rate.
 */
async function gitInitialCommit(
  gitRoot: string | null,
  fileCount: number,
  scanRate: number,
): Promise<string[]> {
  if (gitRoot === null) return [`  vs git init + add -A + commit: ${peerUnavailable("git")}`];
  const lines: string[] = [];
  const variants = [["git", []], ["git core.fsync=all", GIT_FSYNC_FLAGS]] as const;
  for (const [label, flags] of variants) {
    await Deno.remove(join(gitRoot, ".git"), { recursive: true }).catch(() => undefined);
    await syncDisks();
    const gitMs = await timeMs(async () => {
      await git(gitRoot, ["init", "-q"]);
      await git(gitRoot, [...flags, "add", "-A"]);
      await git(gitRoot, [...flags, "commit", "-q", "-m", "initial"]);
    });
    const gitRate = fileCount / (gitMs / 1000);
    lines.push(
      `  vs ${label} init + add -A + commit: ${formatNumber(gitMs)} ms, ` +
        `${formatNumber(gitRate)} files/s; Chronicle at ${rateRatio(scanRate, gitRate, label)}`,
    );
  }
  return lines;
}

/** Small files written by the latency series, a few paths written over and over. */
function latencyPath(i: number): string {
  return `bench_latency/note_${i % 8}.txt`;
}

/** `writeBytes` call to iteration returned, for small files; run before the watcher starts. */
function writeThroughLatency(ws: Workspace, samples: number, prng: Prng): Promise<LatencySummary> {
  return latencySeries(samples, (i) => {
    const bytes = smallContent(i, prng);
    return () => expectHash(ws.writeBytes(latencyPath(i), bytes), bytes);
  });
}

/** Disk write to iteration recorded by the watcher, for the files of the write-through series. */
function watcherLatency(ws: Workspace, samples: number, prng: Prng): Promise<LatencySummary> {
  return latencySeries(samples, (i) => {
    const bytes = smallContent(i, prng);
    return () => writeAndAwaitCapture(ws, latencyPath(i), bytes);
  }, () => ws.settled());
}

function latencyLines(where: string, writes: LatencySummary, watched: LatencySummary): string[] {
  return [
    latencyLine(`write-through latency (writeBytes -> iteration), ${where}`, writes),
    latencyLine(
      `disk write -> iteration via watcher (debounce ${DEBOUNCE_MS} ms), ${where}`,
      watched,
    ),
  ];
}

/** Storage used by edits of a few bytes at random places of one large file. */
async function storage(root: string, sizes: Sizes): Promise<string[]> {
  await Deno.mkdir(root);
  const ws = await Workspace.open({ root });
  try {
    const prng = new Prng(SEED + 4);
    const content = prng.bytes(sizes.bigFileBytes);
    await expectHash(ws.writeBytes("big.bin", content), content);
    const original = (await ws.cas.stats()).bytes;
    const editsMs = await timeMs(async () => {
      for (let i = 0; i < sizes.bigFileEdits; i++) {
        const width = 1 + prng.int(8);
        const at = prng.int(content.length - width);
        for (let b = 0; b < width; b++) {
          content[at + b] = (content[at + b]! + 1 + prng.int(255)) & 0xff;
        }
        await expectHash(ws.writeBytes("big.bin", content), content);
      }
    });
    const total = (await ws.cas.stats()).bytes;
    const added = total - original;
    const copies = sizes.bigFileEdits * sizes.bigFileBytes;
    const versions = ws.store.history("big.bin").length;
    if (versions !== sizes.bigFileEdits + 1) {
      throw new Error(`Expected "${sizes.bigFileEdits + 1}" versions, found "${versions}"`);
    }
    const label = `${sizes.bigFileEdits} copies`;
    return [
      `storage: ${sizes.bigFileEdits} edits (1-8 bytes at a random place) of a ` +
      `${formatMiB(sizes.bigFileBytes, 0)} file: ${formatMiB(added)} added to the CAS ` +
      `(${formatNumber(added / sizes.bigFileEdits / 1024)} KiB per edit) vs ` +
      `${formatMiB(copies, 0)} as ${label}: ${sizeRatio(added, copies, label)}`,
      `  CAS total with the original: ${formatMiB(total)} for ${versions} versions; ` +
      `${formatNumber(sizes.bigFileEdits / (editsMs / 1000), 1)} large-file edits/s via writeBytes`,
    ];
  } finally {
    await ws.close();
  }
}

/** One timed operation of a series. */
type Operation = () => Promise<unknown>;

/**
 * Runs operations one at a time and times each. `prepare` (untimed) returns the
 * timed operation; `after` (untimed) lets background work finish before the next one.
 */
async function series<T>(
  items: T[],
  prepare: (item: T) => Operation | Promise<Operation>,
  after?: () => Promise<void>,
): Promise<LatencySummary> {
  const samples: number[] = [];
  for (const item of items) {
    const operation = await prepare(item);
    samples.push(await timeMs(operation));
    await after?.();
  }
  return summarize(samples);
}

async function latencySeries(
  count: number,
  prepare: (i: number) => Operation | Promise<Operation>,
  after?: () => Promise<void>,
): Promise<LatencySummary> {
  const warmUp = Array.from({ length: WARM_UP }, (_, i) => i);
  await series(warmUp, prepare, after);
  return series(Array.from({ length: count }, (_, i) => WARM_UP + i), prepare, after);
}

/** Edits per second of a series run one at a time. */
function rate(summary: LatencySummary): number {
  return 1000 / summary.mean;
}

function editLine(label: string, summary: LatencySummary): string {
  return `${formatNumber(summary.count)} edits one at a time, ${label}: ` +
    `${formatNumber(rate(summary))} edits/s (p50 ${formatNumber(summary.p50, 2)} ms, ` +
    `p99 ${formatNumber(summary.p99, 2)} ms)`;
}

function latencyLine(label: string, summary: LatencySummary): string {
  return `${label}: p50 ${formatNumber(summary.p50, 2)} ms, p99 ${
    formatNumber(summary.p99, 2)
  } ms (min ${formatNumber(summary.min, 2)}, max ${formatNumber(summary.max, 2)}, ` +
    `${summary.count} samples)`;
}

/** The file's current bytes with 1 to 8 of them changed at a random place. */
async function editOf(root: string, file: TreeFile, prng: Prng): Promise<Uint8Array> {
  const bytes = await Deno.readFile(join(root, file.path));
  const width = Math.min(bytes.length, 1 + prng.int(8));
  const at = prng.int(bytes.length - width + 1);
  for (let i = 0; i < width; i++) {
    // Printable ASCII, always different from the byte it replaces.
    const old = bytes[at + i]!;
    let next = 33 + prng.int(94);
    if (next === old) next = next === 126 ? 33 : next + 1;
    bytes[at + i] = next;
  }
  return bytes;
}

/** About 100 bytes of text, unique to sample `i`. */
function smallContent(i: number, prng: Prng): Uint8Array {
  const noise = Array.from(prng.bytes(32), (b) => b.toString(16).padStart(2, "0")).join("");
  return new TextEncoder().encode(`sample ${i}: ${noise}\n`);
}

/** Awaits a write-through and checks it recorded `bytes`. */
async function expectHash(
  write: Promise<{ hash: string } | undefined>,
  bytes: Uint8Array,
): Promise<void> {
  const iteration = await write;
  const hash = sha256Hex(bytes);
  if (iteration?.hash !== hash) {
    throw new Error(`Write recorded "${iteration?.hash ?? "nothing"}" instead of "${hash}"`);
  }
}

/** Writes `bytes` to disk as any program would, and resolves once the watcher recorded them. */
async function writeAndAwaitCapture(ws: Workspace, path: string, bytes: Uint8Array): Promise<void> {
  const hash = sha256Hex(bytes);
  const recorded = Promise.withResolvers<void>();
  const check = () => {
    if (ws.store.latest(path)?.hash === hash) recorded.resolve();
  };
  const stop = ws.store.onRecorded(check);
  const timer = setTimeout(
    () =>
      recorded.reject(new Error(`Watcher did not record "${path}" within ${RECORD_TIMEOUT_MS} ms`)),
    RECORD_TIMEOUT_MS,
  );
  try {
    await Deno.writeFile(join(ws.root, path), bytes);
    check();
    await recorded.promise;
  } finally {
    clearTimeout(timer);
    stop();
  }
}

function git(cwd: string, args: string[]): Promise<boolean> {
  return runPeer("git", [...GIT_FLAGS, ...args], { cwd, env: GIT_ENV });
}

if (import.meta.main) {
  for (const line of await run(quickMode())) console.log(line);
}
