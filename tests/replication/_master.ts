/**
 * A replication master as its own process, for end-to-end tests and benchmarks:
 * `deno run -A tests/replication/_master.ts --root DIR --socket PATH [--ws HOST:PORT]
 * [--token T] [--heartbeat MS] [--debounce MS] [--ignore P]… [--to-replica P]…
 * [--to-master P]… [--max-queue N] [--max-writeback N] [--barrier-timeout MS]
 * [--wait-for-quiet]` (record a closed file only after the debounce too, so a test can
 * make the master's capture lag). Prints
 * `READY {"wsPort":…}` once listening; then answers `status`, `settle`, `history PATH`,
 * `changes SINCE`, `set-floor N` and `exit` on stdin (see `_runner_common.ts`).
 *
 * @module
 */
import { HISTORY_FLOOR_META, startMaster } from "../../lib/replication/mod.ts";
import { Workspace } from "../../lib/workspace/mod.ts";
import { ready, runnerArgs, serveCommands } from "./_runner_common.ts";

const args = runnerArgs(Deno.args);
const workspace = await Workspace.open({
  root: args.root!,
  ignore: args.ignore ?? [],
  ignoreToReplica: args["to-replica"] ?? [],
  ignoreToMaster: args["to-master"] ?? [],
});
await workspace.scan();
workspace.watch({
  debounceMs: Number(args.debounce ?? 20),
  captureOnClose: !args["wait-for-quiet"],
});
const master = await startMaster({
  workspace,
  socketPath: args.socket,
  wsListen: args.ws,
  token: args.token,
  heartbeatMs: Number(args.heartbeat ?? 200),
  ...(args["max-queue"] ? { maxQueueItems: Number(args["max-queue"]) } : {}),
  ...(args["max-writeback"] ? { maxWritebackBytes: Number(args["max-writeback"]) } : {}),
  ...(args["barrier-timeout"] ? { barrierTimeoutMs: Number(args["barrier-timeout"]) } : {}),
});
let closing: Promise<void> | null = null;
const shutdown = () =>
  closing ??= (async () => {
    await master.close();
    await workspace.close();
  })();
Deno.addSignalListener("SIGTERM", () => shutdown().then(() => Deno.exit(0)));
await ready({ wsPort: master.wsPort, pid: Deno.pid });
await serveCommands(async (command, arg) => {
  switch (command) {
    case "status":
      return master.status();
    case "settle":
      await workspace.settled();
      return { sequence: workspace.store.sequence() };
    case "history":
      return workspace.store.history(arg);
    case "changes":
      return workspace.store.changesSince(Number(arg || 0));
    case "set-floor":
      workspace.store.setMeta(HISTORY_FLOOR_META, arg);
      return null;
    case "exit":
      await shutdown();
      return null;
    default:
      throw new Error(`unknown command "${command}"`);
  }
});
await shutdown();
Deno.exit(0);
