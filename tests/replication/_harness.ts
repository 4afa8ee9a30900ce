/**
 * End-to-end test support: masters and replicas as child processes (`_master.ts`,
 * `_replica.ts`), stopped together, their status polled with deadlines, and trees
 * compared by content hash and mode (`tests/_helpers/tree_state.ts`).
 *
 * @module
 */
import type { ReplicaStatus } from "../../lib/replication/mod.ts";
import { waitFor } from "../_helpers/wait_for.ts";
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

  /**
   * Starts `tests/replication/<script>` with `args` and waits for its `READY` line;
   * `denoFlags` go to `deno run` (the benchmark's `--cpu-prof`, say).
   */
  static async start(
    name: string,
    script: string,
    args: string[],
    denoFlags: readonly string[] = [],
  ): Promise<Peer> {
    const process = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--no-check", ...denoFlags, `${HERE}${script}`, ...args],
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

/**
 * Stops every peer, one after another in the order given (replicas before their master),
 * even when an earlier one fails to stop, so that no process outlives the test.
 *
 * @throws The first stop's error, once all were tried.
 */
export async function stopPeers(...peers: Peer[]): Promise<void> {
  const errors: unknown[] = [];
  for (const peer of peers) await peer.stop().catch((error) => errors.push(error));
  if (errors.length > 0) throw errors[0];
}

/** A replica's status, as its runner reports it. */
export function replicaStatus(replica: Peer): Promise<ReplicaStatus> {
  return replica.command<ReplicaStatus>("status");
}

/** Waits until the replica says it is live (the master certified its catch-up). */
export function waitForLive(replica: Peer): Promise<ReplicaStatus> {
  return waitFor(`${replica.name} to be live`, async () => {
    const status = await replicaStatus(replica);
    return status.state === "live" ? status : undefined;
  });
}

/** Waits until the replica has no write-back waiting for an answer. */
export function writeBacksAnswered(replica: Peer): Promise<ReplicaStatus> {
  return waitFor(`${replica.name}'s write-backs answered`, async () => {
    const status = await replicaStatus(replica);
    return status.pendingWriteBacks === 0 ? status : undefined;
  });
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

/**
 * Runs a replica with `--die-after-writeback` (or the `die` flags given, such as
 * `["--die-after-ack", "100"]`) to its end: it may exit before it prints `READY` (its first
 * `WriteBack` can go out while it starts), so it is not a {@linkcode Peer}.
 *
 * @returns Its exit code and what it wrote to stderr.
 */
export async function runDyingReplica(
  root: string,
  socket: string,
  args: string[] = [],
  die: string[] = ["--die-after-writeback"],
): Promise<{ code: number; stderr: string }> {
  // stdin stays open: the runner exits when it ends.
  const process = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--no-check",
      `${HERE}_replica.ts`,
      "--root",
      root,
      "--connect",
      socket,
      ...die,
      ...args,
    ],
    stdin: "piped",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(process.stderr).text();
  const { code } = await process.status;
  await process.stdin.close().catch(() => {});
  return { code, stderr: await stderr };
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
export {
  describeDifference,
  type SameTreesOptions,
  treeState,
  waitForSameTrees,
} from "../_helpers/tree_state.ts";
