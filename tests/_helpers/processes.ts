/** The project root, for running `main.ts` in child processes. */
export const PROJECT_ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
/** `main.ts`, absolute. */
export const MAIN = `${PROJECT_ROOT}/main.ts`;

/** A port nobody listens on right now. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** Options for {@linkcode runChronicle} and {@linkcode spawnChronicle}. */
export interface RunOptions {
  /** The script to run instead of `main.ts`. */
  script?: string;
  /** The working folder. @default {PROJECT_ROOT} */
  cwd?: string;
  /** Variables added to the environment (`NO_COLOR=1` always is). */
  env?: Record<string, string>;
  /** The `deno run` flags before the script. @default {["-A"]} */
  permissions?: string[];
  /** Bytes written to the child's stdin, which is closed otherwise. */
  stdin?: Uint8Array;
}

/** A running child `chronicle` process whose output is collected. */
export interface Child {
  process: Deno.ChildProcess;
  /** Everything written to stderr so far. */
  output(): string;
  /** SIGTERM, then waits for exit; returns the exit code. */
  stop(signal?: Deno.Signal): Promise<number>;
}

/** Starts `deno run -A main.ts ...args` (or a given script) as a child process. */
export function spawnChronicle(args: string[], options: Omit<RunOptions, "stdin"> = {}): Child {
  const command = new Deno.Command(Deno.execPath(), {
    args: ["run", ...(options.permissions ?? ["-A"]), options.script ?? MAIN, ...args],
    cwd: options.cwd ?? PROJECT_ROOT,
    env: { NO_COLOR: "1", ...(options.env ?? {}) },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
  const process = command.spawn();
  let text = "";
  const decoder = new TextDecoder();
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
  };
  const drained = Promise.all([drain(process.stdout), drain(process.stderr)]);
  let exited: Promise<number> | undefined;
  return {
    process,
    output: () => text,
    stop: (signal: Deno.Signal = "SIGTERM") => {
      exited ??= (async () => {
        try {
          process.kill(signal);
        } catch { /* already gone */ }
        const status = await process.status;
        await drained;
        return status.code;
      })();
      return exited;
    },
  };
}

/** What a finished child wrote, and how it exited. */
export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  /** Stdout as bytes. */
  bytes: Uint8Array;
}

/** Runs `deno run -A main.ts ...args` (or a given script) to completion. */
export async function runChronicle(args: string[], options: RunOptions = {}): Promise<RunResult> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...(options.permissions ?? ["-A"]), options.script ?? MAIN, ...args],
    cwd: options.cwd ?? PROJECT_ROOT,
    env: { NO_COLOR: "1", ...(options.env ?? {}) },
    stdin: options.stdin ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (options.stdin) {
    const writer = child.stdin.getWriter();
    await writer.write(options.stdin);
    await writer.close();
  }
  const out = await child.output();
  const decoder = new TextDecoder();
  return {
    code: out.code,
    stdout: decoder.decode(out.stdout),
    stderr: decoder.decode(out.stderr),
    bytes: out.stdout,
  };
}
