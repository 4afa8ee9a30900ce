/**
 * The corpora every replication benchmark reports on: the uniform synthetic tree, a
 * realistic generated one (tests/_helpers/realistic_tree.ts), and real npm packages
 * installed at bench time. Each builds into an empty folder; {@linkcode listTree} then
 * says what it holds.
 *
 * @module
 */
import { makeRealisticTree } from "../../tests/_helpers/realistic_tree.ts";
import { FULL_NPM_PACKAGES, installNpmCorpus, QUICK_NPM_PACKAGES } from "./npm_corpus.ts";
import { makeTree } from "./temp_tree.ts";

/** A tree to benchmark on. */
export interface Corpus {
  /** Short name for result lines: `synthetic`, `realistic`, `npm`. */
  name: string;
  /**
   * Fills `root` (an empty folder).
   *
   * @returns `false` when the corpus cannot be had here (see `unavailable`).
   */
  build(root: string): Promise<boolean>;
  /** Why `build` may fail, for the result line. */
  unavailable: string;
}

/** One entry of a built tree. */
export interface CorpusEntry {
  /** Relative, `/`-separated path. */
  path: string;
  /** What it is. */
  kind: "file" | "dir" | "symlink";
  /** Bytes of a file, 0 for the others. */
  size: number;
}

/**
 * The three corpora at a size.
 *
 * @param files Files of the generated trees.
 * @param quick Whether to install the quick npm corpus instead of the full one.
 * @returns Synthetic, realistic and npm, in that order.
 */
export function benchCorpora(files: number, quick: boolean): Corpus[] {
  return [
    {
      name: "synthetic",
      build: async (root) => (await makeTree(root, { files, seed: 7, maxSize: 16384 }), true),
      unavailable: "",
    },
    {
      name: "realistic",
      build: async (root) => (await makeRealisticTree(root, { files, seed: 7 }), true),
      unavailable: "",
    },
    {
      name: "npm",
      build: async (root) =>
        (await installNpmCorpus(root, quick ? QUICK_NPM_PACKAGES : FULL_NPM_PACKAGES)) !== null,
      unavailable: "npm install failed: no npm, or the registry cannot be reached",
    },
  ];
}

/**
 * Everything under `root`, folders before what they hold.
 *
 * @param root The tree.
 * @returns Its entries, sorted by path.
 */
export async function listTree(root: string): Promise<CorpusEntry[]> {
  const out: CorpusEntry[] = [];
  const walk = async (dir: string, prefix: string) => {
    for await (const entry of Deno.readDir(dir)) {
      const path = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
      if (entry.isSymlink) out.push({ path, kind: "symlink", size: 0 });
      else if (entry.isDirectory) {
        out.push({ path, kind: "dir", size: 0 });
        await walk(`${dir}/${entry.name}`, path);
      } else if (entry.isFile) {
        out.push({ path, kind: "file", size: (await Deno.lstat(`${dir}/${entry.name}`)).size });
      }
    }
  };
  await walk(root, "");
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * CPU time a process has used so far, user and system, from `/proc/PID/stat`.
 *
 * @param pid A live process.
 * @returns Milliseconds, or 0 where `/proc` is missing.
 */
export async function processCpuMs(pid: number): Promise<number> {
  return (await cpuTicks(pid, 11)) * 1000 / CLOCK_TICKS_PER_SECOND; // utime, stime
}

/**
 * CPU time, user and system, of this process's children that ended and were waited for
 * (with theirs), from `/proc/self/stat`: read before and after a peer tool runs, the
 * difference is that tool's CPU time, every process it started included (rsync's
 * receiver and generator).
 *
 * @returns Milliseconds, or 0 where `/proc` is missing.
 */
export async function endedChildrenCpuMs(): Promise<number> {
  return (await cpuTicks("self", 13)) * 1000 / CLOCK_TICKS_PER_SECOND; // cutime, cstime
}

/** Two adjacent clock-tick fields of `/proc/PID/stat` added up, from `at` (0 when missing). */
async function cpuTicks(pid: number | "self", at: number): Promise<number> {
  try {
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
    // Fields after the command name (which may hold spaces) start at field 3.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[at]) + Number(fields[at + 1]);
  } catch {
    return 0;
  }
}

/**
 * A process's resident memory now (`VmRSS` of `/proc/PID/status`).
 *
 * @param pid The process.
 * @returns Bytes, or 0 where the process or `/proc` is gone.
 */
export function processRssBytes(pid: number): number {
  try {
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? "0") * 1024;
  } catch {
    return 0;
  }
}

/**
 * Bytes a process has caused to be written to storage so far (`write_bytes` less
 * `cancelled_write_bytes` of `/proc/PID/io`, counted when pages are dirtied, all its
 * threads included), or `null` where the kernel keeps no such count.
 *
 * @param pid The process.
 * @returns The bytes, or `null`.
 */
export async function processWrittenBytes(pid: number): Promise<number | null> {
  try {
    const io = await Deno.readTextFile(`/proc/${pid}/io`);
    const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)$`, "m").exec(io)?.[1]);
    const bytes = field("write_bytes") - field("cancelled_write_bytes");
    return Number.isFinite(bytes) ? bytes : null;
  } catch {
    return null;
  }
}

/** `sysconf(_SC_CLK_TCK)`: 100 on every Linux Chronicle runs on. */
const CLOCK_TICKS_PER_SECOND = 100;
