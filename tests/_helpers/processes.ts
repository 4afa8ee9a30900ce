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

/** A running child `chronicle` process whose output is collected. */
export interface Child {
  process: Deno.ChildProcess;
  /** Everything written to stderr so far. */
  output(): string;
  /** SIGTERM, then waits for exit; returns the exit code. */
  stop(signal?: Deno.Signal): Promise<number>;
}

/** Starts `deno run -A main.ts ...args` (or a given script) as a child process. */
export function spawnChronicle(
  args: string[],
  options: { script?: string; cwd?: string; env?: Record<string, string>; permissions?: string[] } =
    {},
): Child {
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

/** Runs `deno run -A main.ts ...args` to completion. */
export async function runChronicle(
  args: string[],
  options: { cwd?: string; stdin?: Uint8Array } = {},
): Promise<{ code: number; stdout: string; stderr: string; bytes: Uint8Array }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, ...args],
    cwd: options.cwd ?? PROJECT_ROOT,
    env: { NO_COLOR: "1" },
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
