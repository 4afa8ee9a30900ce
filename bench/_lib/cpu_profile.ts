/**
 * Where a process's CPU time goes, from the `.cpuprofile` files Deno writes when run with
 * `--cpu-prof --cpu-prof-dir=DIR` (V8's format: a call tree of `nodes`, each with its
 * `callFrame` and `hitCount`, and the `samples` taken, each a leaf node id, with the
 * `timeDeltas` between them in microseconds). Functions are ranked by self time (samples
 * in the function itself) and by total time (samples with the function anywhere on the
 * stack, counted once however deep it recurses).
 *
 * @module
 */

/** A V8 CPU profile as `--cpu-prof` writes it (the fields read here). */
export interface CpuProfile {
  /** The call tree. */
  nodes: CpuProfileNode[];
  /** Microseconds, V8's monotonic clock. */
  startTime: number;
  /** Microseconds, V8's monotonic clock. */
  endTime: number;
  /** The leaf node of each sample. */
  samples?: number[];
  /** Microseconds from the previous sample (from `startTime` for the first). */
  timeDeltas?: number[];
}

/** One node of a profile's call tree. */
export interface CpuProfileNode {
  /** Unique in the profile. */
  id: number;
  /** The function this node stands for. */
  callFrame: {
    functionName: string;
    url: string;
    /** 0-based, of the code V8 ran (the transpiled module). */
    lineNumber: number;
    columnNumber: number;
  };
  /** Samples taken with this node on top. */
  hitCount?: number;
  /** Callees' node ids. */
  children?: number[];
}

/** A time window of a profile, in ms from the profile's first sample time. */
export interface ProfileWindow {
  /** Start, ms. */
  fromMs: number;
  /** End, ms. */
  toMs: number;
}

/** One function's share of the sampled time. */
export interface FunctionTime {
  /** `name (file:line)`. */
  name: string;
  /** Ms sampled in the function itself. */
  selfMs: number;
  /** Ms sampled with the function anywhere on the stack. */
  totalMs: number;
}

/** What a set of profiles of one role says. */
export interface ProfileSummary {
  /** Ms sampled, idle left out. */
  busyMs: number;
  /** Ms sampled while idle (waiting on I/O or timers). */
  idleMs: number;
  /** Every function seen, with its times. */
  functions: FunctionTime[];
}

/**
 * Frames that stand for no code, or for a wait: time spent waiting, not working. A
 * worker (the replica's checkpointer) started under `--cpu-prof` is sampled inside
 * `op_worker_maybe_wait_for_debugger` while it waits for the profiler: about half a
 * second per worker counted as busy, without this.
 */
const IDLE = new Set(["(idle)", "(root)", "op_worker_maybe_wait_for_debugger"]);

/**
 * Reads every `.cpuprofile` in a folder.
 *
 * @param dir Where `--cpu-prof-dir` pointed.
 * @returns The profiles, in no particular order (none when the folder is missing).
 */
export async function readProfiles(dir: string): Promise<CpuProfile[]> {
  const out: CpuProfile[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (!entry.isFile || !entry.name.endsWith(".cpuprofile")) continue;
      out.push(JSON.parse(await Deno.readTextFile(`${dir}/${entry.name}`)) as CpuProfile);
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return out;
}

/**
 * Adds up where the sampled time of some profiles went, per function.
 *
 * @param profiles Profiles of one role (say every replica of a run).
 * @param windows Of each profile (same order), the windows to count; all of it when missing.
 * @returns Busy and idle time and every function's self and total time.
 */
export function summarizeProfiles(
  profiles: readonly CpuProfile[],
  windows: readonly (readonly ProfileWindow[] | undefined)[] = [],
): ProfileSummary {
  const byName = new Map<string, FunctionTime>();
  let busyMs = 0;
  let idleMs = 0;
  profiles.forEach((profile, index) => {
    const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
    const parent = new Map<number, number>();
    for (const node of profile.nodes) {
      for (const child of node.children ?? []) parent.set(child, node.id);
    }
    const names = new Map(profile.nodes.map((node) => [node.id, frameName(node)]));
    const samples = profile.samples ?? [];
    const deltas = profile.timeDeltas ?? [];
    const within = windows[index];
    let at = 0; // µs from startTime
    for (let i = 0; i < samples.length; i++) {
      at += deltas[i] ?? 0;
      // A sample stands for the time until the next one (the last: one more interval).
      const ms = (deltas[i + 1] ?? deltas[i] ?? 0) / 1000;
      if (within && !within.some((w) => at / 1000 >= w.fromMs && at / 1000 < w.toMs)) continue;
      const leaf = nodes.get(samples[i]!);
      if (!leaf || IDLE.has(leaf.callFrame.functionName)) {
        idleMs += ms;
        continue;
      }
      busyMs += ms;
      const seen = new Set<string>();
      for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
        const name = names.get(id)!;
        if (IDLE.has(nodes.get(id)!.callFrame.functionName) || seen.has(name)) continue;
        const entry = byName.get(name) ?? { name, selfMs: 0, totalMs: 0 };
        byName.set(name, entry);
        if (id === leaf.id) entry.selfMs += ms;
        entry.totalMs += ms;
        seen.add(name);
      }
    }
  });
  return { busyMs, idleMs, functions: [...byName.values()] };
}

/**
 * Lines for a report: the busy time, then the top functions by self time and by total time.
 *
 * @param title What was profiled, for the heading.
 * @param summary From {@linkcode summarizeProfiles}.
 * @param top How many functions per ranking. @default {15}
 * @returns Printable lines.
 */
export function profileLines(title: string, summary: ProfileSummary, top = 15): string[] {
  const ms = (value: number) => value.toFixed(0).padStart(6);
  const share = (value: number) =>
    `${((value / Math.max(1, summary.busyMs)) * 100).toFixed(1).padStart(5)}%`;
  const ranked = (key: "selfMs" | "totalMs") =>
    [...summary.functions].sort((a, b) => b[key] - a[key]).slice(0, top)
      .map((f) => `    ${ms(f[key])} ms ${share(f[key])}  ${f.name}`);
  return [
    `  profile of the ${title}: ${summary.busyMs.toFixed(0)} ms busy, ${
      summary.idleMs.toFixed(0)
    } ms idle (sampled)`,
    `   by self time:`,
    ...ranked("selfMs"),
    `   by total time (the function and what it calls):`,
    ...ranked("totalMs"),
  ];
}

/** `name (file:line)`, the file relative to the working folder where it is under it. */
function frameName(node: CpuProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const name = functionName === "" ? "(anonymous)" : functionName;
  if (url === "") return name;
  const cwd = `file://${Deno.cwd()}/`;
  const file = url.startsWith(cwd) ? url.slice(cwd.length) : url.replace(/^.*\/node_modules\//, "");
  return `${name} (${file}:${lineNumber + 1})`;
}

/**
 * Profiles child processes for a benchmark: {@linkcode ProfileSession.flags} gives the
 * `deno run` flags of one process (each its own folder, its spawn time noted), then
 * {@linkcode ProfileSession.window} marks the stretches to count, in this process's
 * `performance.now()`, and {@linkcode ProfileSession.summary} reads what the processes
 * wrote when they exited. A profile's clock starts when its runtime does, a few tens of
 * ms after the spawn, so a window reaches that much past its end: pick windows with idle
 * time around them.
 *
 * @example
 * ```ts ignore
 * const session = new ProfileSession(await Deno.makeTempDir());
 * const peer = await Peer.start("master", "_master.ts", args, session.flags("master"));
 * const start = performance.now();
 * // … the work …
 * session.window("master", start, performance.now());
 * await peer.stop();
 * console.log(profileLines("master", await session.summary("master")).join("\n"));
 * ```
 */
export class ProfileSession {
  readonly #dir: string;
  readonly #spawned = new Map<string, number>();
  readonly #windows = new Map<string, ProfileWindow[]>();

  /** @param dir An empty folder for the profiles. */
  constructor(dir: string) {
    this.#dir = dir;
  }

  /**
   * The flags that make the process about to be spawned write its profile.
   *
   * @param key Names this one process (say `replica-2`).
   * @returns Flags for `deno run`.
   */
  flags(key: string): string[] {
    this.#spawned.set(key, performance.now());
    return ["--cpu-prof", `--cpu-prof-dir=${this.#dir}/${key}`];
  }

  /**
   * Counts a stretch of a process's profile; a process without windows counts whole.
   *
   * @param key As given to {@linkcode ProfileSession.flags}.
   * @param fromMs `performance.now()` at the start.
   * @param toMs `performance.now()` at the end.
   */
  window(key: string, fromMs: number, toMs: number): void {
    const spawned = this.#spawned.get(key) ?? fromMs;
    const list = this.#windows.get(key) ?? [];
    list.push({ fromMs: fromMs - spawned, toMs: toMs - spawned });
    this.#windows.set(key, list);
  }

  /**
   * Adds up the profiles of the processes whose key starts with `prefix`; call it once
   * they have exited.
   *
   * @param prefix Say `replica-` for every replica.
   * @returns Their summary.
   */
  async summary(prefix: string): Promise<ProfileSummary> {
    const profiles: CpuProfile[] = [];
    const windows: (ProfileWindow[] | undefined)[] = [];
    for (const key of this.#spawned.keys()) {
      if (!key.startsWith(prefix)) continue;
      for (const profile of await readProfiles(`${this.#dir}/${key}`)) {
        profiles.push(profile);
        windows.push(this.#windows.get(key));
      }
    }
    return summarizeProfiles(profiles, windows);
  }
}
