/** Test helpers for the shipping files: the compile tasks' permissions and child processes. */
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root. */
export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The compile tasks, by name, as written in deno.json. */
export function compileTasks(): Map<string, string> {
  const config = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json"))) as {
    tasks: Record<string, string>;
  };
  return new Map(Object.entries(config.tasks).filter(([name]) => name.startsWith("compile:")));
}

/** The `--allow-*` flags of a compile task, in order. */
export function permissionFlags(task: string): string[] {
  return task.split(/\s+/).filter((word) => word.startsWith("--allow-") || word === "-A");
}

/** The `--v8-flags=…` of a task, in order. */
export function v8Flags(task: string): string[] {
  return task.split(/\s+/).filter((word) => word.startsWith("--v8-flags="));
}

/** The V8 flags `deno task compile:agent` embeds: what the binaries run with. */
export function binaryV8Flags(): string[] {
  const task = compileTasks().get("compile:agent");
  if (!task) throw new Error("deno.json has no compile:agent task");
  return v8Flags(task);
}

/** The permission flags `deno task compile:agent` grants: what the binaries run with. */
export function binaryPermissions(): string[] {
  const task = compileTasks().get("compile:agent");
  if (!task) throw new Error("deno.json has no compile:agent task");
  return permissionFlags(task);
}

/** Output of a finished child process. */
export interface Finished {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `bin/<role>.ts` with exactly the binaries' permissions and waits for it. */
export async function runBinary(
  role: "agent" | "sandbox",
  args: string[],
  env: Record<string, string> = {},
): Promise<Finished> {
  const output = await binaryCommand(role, args, env).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

/** A `deno run` of `bin/<role>.ts` with exactly the binaries' permissions. */
export function binaryCommand(
  role: "agent" | "sandbox",
  args: string[],
  env: Record<string, string> = {},
  stdin: "piped" | "null" = "null",
): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      ...binaryV8Flags(),
      ...binaryPermissions(),
      join(ROOT, "bin", `${role}.ts`),
      ...args,
    ],
    cwd: ROOT,
    env: { ...toolchainEnv(), NO_COLOR: "1", ...env },
    clearEnv: true,
    stdin,
    stdout: "piped",
    stderr: "piped",
  });
}

/** The variables Deno itself needs to find its cache; no CHRONICLE_* leaks into children. */
export function toolchainEnv(): Record<string, string> {
  const kept: Record<string, string> = {};
  for (
    const name of ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME", "TMPDIR", "NPM_CONFIG_REGISTRY"]
  ) {
    const value = Deno.env.get(name);
    if (value !== undefined) kept[name] = value;
  }
  return kept;
}

/** A running binary whose stderr is collected as it comes. */
export class Running {
  readonly child: Deno.ChildProcess;
  stderr = "";
  readonly #drained: Promise<void>;
  readonly #stdout: Promise<void>;

  constructor(command: Deno.Command) {
    const child = command.spawn();
    this.child = child;
    this.#drained = (async () => {
      for await (const piece of child.stderr.pipeThrough(new TextDecoderStream())) {
        this.stderr += piece;
      }
    })();
    // Drained rather than cancelled: a closed pipe would fail the child's writes.
    this.#stdout = (async () => {
      for await (const _ of child.stdout) { /* discarded */ }
    })();
  }

  /** Sends SIGTERM and waits for the exit, failing if it takes longer than `timeoutMs`. */
  async stop(timeoutMs = 20_000): Promise<number> {
    try {
      this.child.kill("SIGTERM");
    } catch { /* already gone */ }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`No exit ${timeoutMs} ms after SIGTERM`)),
        timeoutMs,
      );
    });
    try {
      const status = await Promise.race([this.child.status, timeout]);
      await this.#drained;
      await this.#stdout;
      return status.code;
    } finally {
      clearTimeout(timer);
    }
  }
}
