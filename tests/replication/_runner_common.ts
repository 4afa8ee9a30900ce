/**
 * Shared by the runner programs `_master.ts` and `_replica.ts`: argument parsing and the
 * line protocol on stdin/stdout through which tests drive them. Each command line gets
 * exactly one answer line: `OK <json>` or `ERR <message>`.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { errorMessage } from "../../lib/log/mod.ts";
import { keepHeapSmall } from "../../lib/memory/mod.ts";
import { type WatchOptions, Workspace } from "../../lib/workspace/mod.ts";
import { TextLineStream } from "./_text_lines.ts";

/** Parses runner flags (all strings, `--ignore`-style ones repeatable). */
export function runnerArgs(args: string[]) {
  return parseArgs({
    args,
    options: {
      root: { type: "string" },
      socket: { type: "string" },
      ws: { type: "string" },
      connect: { type: "string" },
      "ws-connect": { type: "string" },
      token: { type: "string" },
      "sandbox-id": { type: "string" },
      mode: { type: "string" },
      heartbeat: { type: "string" },
      debounce: { type: "string" },
      rescan: { type: "string" },
      ignore: { type: "string", multiple: true },
      "to-replica": { type: "string", multiple: true },
      "to-master": { type: "string", multiple: true },
      "max-queue": { type: "string" },
      window: { type: "string" },
      "max-writeback": { type: "string" },
      "barrier-timeout": { type: "string" },
      "backoff-max": { type: "string" },
      "die-after-writeback": { type: "boolean" },
      "die-after-ack": { type: "string" },
      "wait-for-quiet": { type: "boolean" },
    },
  }).values;
}

/** Answers commands from stdin until it closes or the command `exit` is answered. */
export async function serveCommands(
  handler: (command: string, arg: string) => Promise<unknown>,
): Promise<void> {
  const lines = Deno.stdin.readable.pipeThrough(new TextDecoderStream()).pipeThrough(
    new TextLineStream(),
  );
  const encoder = new TextEncoder();
  for await (const line of lines) {
    const [command = "", ...rest] = line.trim().split(" ");
    if (command === "") continue;
    let answer: string;
    try {
      const result = await handler(command, rest.join(" "));
      answer = `OK ${JSON.stringify(result ?? null)}`;
      await Deno.stdout.write(encoder.encode(answer + "\n"));
      if (command === "exit") return;
    } catch (error) {
      answer = `ERR ${errorMessage(error)}`;
      await Deno.stdout.write(encoder.encode(answer + "\n"));
    }
  }
}

/** Prints the ready line tests wait for. */
export async function ready(info: unknown): Promise<void> {
  await Deno.stdout.write(new TextEncoder().encode(`READY ${JSON.stringify(info)}\n`));
}

/** Opens the workspace the runner's flags name, scans it, and starts watching it. */
export async function openRunnerWorkspace(
  args: ReturnType<typeof runnerArgs>,
  watch: WatchOptions = {},
): Promise<Workspace> {
  // As the daemon does: a runner started with the binaries' V8 flags (--expose-gc, as the
  // benchmarks start them) collects its garbage early, for the process's life.
  keepHeapSmall();
  const workspace = await Workspace.open({
    root: args.root!,
    ignore: args.ignore ?? [],
    ignoreToReplica: args["to-replica"] ?? [],
    ignoreToMaster: args["to-master"] ?? [],
  });
  await workspace.scan();
  workspace.watch({
    debounceMs: Number(args.debounce ?? 20),
    ...(args.rescan ? { rescanMs: Number(args.rescan) } : {}),
    ...watch,
  });
  return workspace;
}

/**
 * Runs a started master or replica until `exit`, SIGTERM or the end of stdin: prints the
 * ready line, answers `settle`, `exit`, `missing HASH…` (those no iteration holds),
 * `history PATH`, `changes SINCE` and the peer's own commands, then closes the peer
 * and its workspace and exits.
 */
export async function serveRunner(
  workspace: Workspace,
  peer: { close(): Promise<void> },
  info: unknown,
  commands: Record<string, (arg: string) => unknown>,
): Promise<never> {
  let closing: Promise<void> | null = null;
  const shutdown = () =>
    closing ??= (async () => {
      await peer.close();
      await workspace.close();
    })();
  Deno.addSignalListener("SIGTERM", () => shutdown().then(() => Deno.exit(0)));
  await ready(info);
  await serveCommands(async (command, arg) => {
    if (command === "settle") {
      await workspace.settled();
      return { sequence: workspace.store.sequence() };
    }
    if (command === "exit") return await shutdown();
    if (command === "missing") {
      // The hashes given (space-separated) that no iteration of the store holds.
      const held = workspace.store.addHashesTo(new Set<string>());
      return arg.split(" ").filter((hash) => hash !== "" && !held.has(hash));
    }
    if (command === "history") return workspace.store.history(arg);
    if (command === "changes") return workspace.store.changesSince(Number(arg || 0));
    const run = Object.hasOwn(commands, command) ? commands[command] : undefined;
    if (!run) throw new Error(`unknown command "${command}"`);
    return await run(arg);
  });
  await shutdown();
  Deno.exit(0);
}
