/**
 * End-to-end test support: masters and replicas as child processes (`_master.ts`,
 * `_replica.ts`), trees compared by content hash and mode, and polling with deadlines.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { TextLineStream } from "./_text_lines.ts";

const HERE = new URL(".", import.meta.url).pathname;

/** A master or replica process started by a test. */
export class Peer {
  readonly name: string;
  readonly process: Deno.ChildProcess;
  /** What the process printed on its `READY` line. */
  info: Record<string, unknown> = {};
  readonly #lines: AsyncIterator<string>;
  readonly #log: string[] = [];
  #chain: Promise<unknown> = Promise.resolve();
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #exited = false;

  private constructor(name: string, process: Deno.ChildProcess) {
    this.name = name;
    this.process = process;
    this.#lines = process.stdout.pipeThrough(new TextDecoderStream())
      .pipeThrough(new TextLineStream())[Symbol.asyncIterator]();
    this.#writer = process.stdin.getWriter();
    this.process.status.then(() => this.#exited = true);
    (async () => {
      const lines = process.stderr.pipeThrough(new TextDecoderStream()).pipeThrough(
        new TextLineStream(),
      );
      for await (const line of lines) {
        this.#log.push(line);
        if (this.#log.length > 400) this.#log.shift();
        if (Deno.env.get("CHRONICLE_TEST_VERBOSE")) console.error(`[${name}] ${line}`);
      }
    })();
  }

  /** Starts `tests/replication/<script>` with `args` and waits for its `READY` line. */
  static async start(name: string, script: string, args: string[]): Promise<Peer> {
    const process = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--no-check", `${HERE}${script}`, ...args],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const peer = new Peer(name, process);
    const line = await peer.#nextLine(30_000);
    if (!line?.startsWith("READY ")) {
      await peer.kill();
      throw new Error(`${name} did not start (got ${JSON.stringify(line)}):\n${peer.logs()}`);
    }
    peer.info = JSON.parse(line.slice(6));
    return peer;
  }

  /** The last lines the process wrote to stderr. */
  logs(): string {
    return this.#log.join("\n");
  }

  /** Whether the process has exited. */
  get exited(): boolean {
    return this.#exited;
  }

  /** Sends a command line and returns the answer's JSON. */
  command<T = unknown>(command: string, timeoutMs = 60_000): Promise<T> {
    const run = this.#chain.then(async () => {
      await this.#writer.write(new TextEncoder().encode(command + "\n"));
      const line = await this.#nextLine(timeoutMs);
      if (line === null) {
        throw new Error(`${this.name} gave no answer to "${command}":\n${this.logs()}`);
      }
      if (line.startsWith("ERR ")) throw new Error(`${this.name}: ${line.slice(4)}`);
      return JSON.parse(line.slice(3)) as T;
    });
    this.#chain = run.catch(() => {});
    return run;
  }

  /**
   * Asks the process to shut down cleanly and waits for it. A shutdown that hangs is a
   * failure: the process is killed and the error says so, so no test leaves it behind.
   */
  async stop(timeoutMs = 20_000): Promise<void> {
    if (this.#exited) return;
    const answered = await this.command("exit", timeoutMs).then(() => true, () => false);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const exited = await Promise.race([
      this.process.status.then(() => true),
      new Promise<boolean>((resolve) => timer = setTimeout(() => resolve(false), timeoutMs)),
    ]);
    clearTimeout(timer);
    if (!exited) {
      await this.kill();
      throw new Error(`${this.name} did not shut down within ${timeoutMs} ms:\n${this.logs()}`);
    }
    if (!answered && !(await this.process.status).success) {
      throw new Error(`${this.name} failed while shutting down:\n${this.logs()}`);
    }
    await this.#close();
  }

  /** Kills the process at once (SIGKILL) and waits for it. */
  async kill(): Promise<void> {
    if (!this.#exited) {
      try {
        this.process.kill("SIGKILL");
      } catch { /* already gone */ }
    }
    await this.#close();
  }

  async #close(): Promise<void> {
    await this.process.status;
    await this.#writer.close().catch(() => {});
    await this.process.stdout.cancel().catch(() => {});
  }

  async #nextLine(timeoutMs: number): Promise<string | null> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const next = await Promise.race([
        this.#lines.next(),
        new Promise<null>((resolve) => timer = setTimeout(() => resolve(null), timeoutMs)),
      ]);
      if (next === null || next.done) return null;
      return next.value;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Options for {@linkcode startMaster} and {@linkcode startReplica}. */
export interface PeerOptions {
  /** Extra runner flags. */
  args?: string[];
}

/** Starts a master on `root`, listening on `socket`. */
export function startMaster(
  root: string,
  socket: string,
  options: PeerOptions = {},
): Promise<Peer> {
  return Peer.start("master", "_master.ts", [
    "--root",
    root,
    "--socket",
    socket,
    ...(options.args ?? []),
  ]);
}

/** Starts a replica of the master at `socket` on `root`. */
export function startReplica(
  root: string,
  socket: string,
  options: PeerOptions & { name?: string } = {},
): Promise<Peer> {
  return Peer.start(options.name ?? "replica", "_replica.ts", [
    "--root",
    root,
    "--connect",
    socket,
    ...(options.args ?? []),
  ]);
}

/** Every file and link under `root` (Chronicle's data folder and temp files left out), as `path → "mode hash"`. */
export async function treeState(
  root: string,
  exclude: string[] = [],
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (dir: string, prefix: string) => {
    let entries: Deno.DirEntry[];
    try {
      entries = await Array.fromAsync(Deno.readDir(dir));
    } catch (error) {
      // Changed while we looked (a folder turned into a file): the next look sees it.
      if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
        return;
      }
      throw error;
    }
    for (const entry of entries) {
      const path = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
      if (path === ".chronicle" || entry.name.endsWith(".chronicle-tmp")) continue;
      if (exclude.some((e) => path === e || path.startsWith(e + "/"))) continue;
      const absolute = `${dir}/${entry.name}`;
      try {
        if (entry.isSymlink) {
          out.set(path, `link ${sha(new TextEncoder().encode(await Deno.readLink(absolute)))}`);
        } else if (entry.isDirectory) {
          await walk(absolute, path);
        } else if (entry.isFile) {
          const info = await Deno.lstat(absolute);
          const mode = ((info.mode ?? 0) & 0o7777).toString(8);
          out.set(path, `${mode} ${sha(await Deno.readFile(absolute))}`);
        }
      } catch (error) {
        const changing = error instanceof Deno.errors.NotFound ||
          error instanceof Deno.errors.NotADirectory || error instanceof Deno.errors.IsADirectory;
        if (!changing) throw error;
      }
    }
  };
  await walk(root, "");
  return out;
}

function sha(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** A readable account of how two trees differ (at most 20 paths). */
export function describeDifference(a: Map<string, string>, b: Map<string, string>): string {
  const lines: string[] = [];
  for (const [path, state] of a) {
    if (b.get(path) !== state) lines.push(`${path}: ${state} vs ${b.get(path) ?? "absent"}`);
  }
  for (const path of b.keys()) if (!a.has(path)) lines.push(`${path}: absent vs ${b.get(path)}`);
  return lines.length === 0
    ? "identical"
    : lines.slice(0, 20).join("\n") + (lines.length > 20 ? `\n… ${lines.length - 20} more` : "");
}

/**
 * Polls until every tree equals the first (by content hash and mode), failing with the
 * difference and the peers' logs after `timeoutMs`.
 */
export async function waitForSameTrees(
  roots: string[],
  options: { timeoutMs?: number; peers?: Peer[]; exclude?: string[] } = {},
): Promise<Map<string, string>> {
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  let delay = 10;
  while (true) {
    const states = await Promise.all(roots.map((root) => treeState(root, options.exclude)));
    const first = states[0]!;
    const different = states.findIndex((state) => describeDifference(first, state) !== "identical");
    if (different === -1) return first;
    if (Date.now() > deadline) {
      const logs = (options.peers ?? []).map((p) => `--- ${p.name} ---\n${p.logs()}`).join("\n");
      throw new Error(
        `Trees ${roots[0]} and ${roots[different]} still differ:\n${
          describeDifference(first, states[different]!)
        }\n${logs}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, 200);
  }
}

/** Runs `work` with fresh temp folders, removed afterwards whatever happens. */
export async function withDirs<const N extends string, T>(
  names: N[],
  work: (dirs: Record<N | "base", string>) => Promise<T>,
): Promise<T> {
  const base = await Deno.makeTempDir({ prefix: "chronicle-repl-" });
  const dirs = { base } as Record<N | "base", string>;
  for (const name of names) {
    dirs[name] = `${base}/${name}`;
    await Deno.mkdir(dirs[name]);
  }
  try {
    return await work(dirs);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
}

export { pseudoRandomBytes } from "../_helpers/random_bytes.ts";
