/**
 * A replication master as its own process, for end-to-end tests and benchmarks:
 * `deno run -A tests/replication/_master.ts --root DIR --socket PATH [--ws HOST:PORT]
 * [--token T] [--heartbeat MS] [--debounce MS] [--ignore P]… [--to-replica P]…
 * [--to-master P]… [--max-queue N] [--window N] [--max-writeback N] [--barrier-timeout MS]
 * [--wait-for-quiet]` (record a closed file only after the debounce too, so a test can
 * make the master's capture lag). Prints
 * `READY {"wsPort":…}` once listening; then answers `status`, `settle`, `history PATH`,
 * `changes SINCE`, `conflicts`, `set-floor N`, `missing HASH…` and `exit` on stdin (see `_runner_common.ts`).
 *
 * @module
 */
import { HISTORY_FLOOR_META, startMaster } from "../../lib/replication/mod.ts";
import { openRunnerWorkspace, runnerArgs, serveRunner } from "./_runner_common.ts";

const args = runnerArgs(Deno.args);
const workspace = await openRunnerWorkspace(args, { captureOnClose: !args["wait-for-quiet"] });
const master = await startMaster({
  workspace,
  socketPath: args.socket,
  wsListen: args.ws,
  token: args.token,
  heartbeatMs: Number(args.heartbeat ?? 200),
  ...(args["max-queue"] ? { maxQueueItems: Number(args["max-queue"]) } : {}),
  ...(args.window ? { windowItems: Number(args.window) } : {}),
  ...(args["max-writeback"] ? { maxWritebackBytes: Number(args["max-writeback"]) } : {}),
  ...(args["barrier-timeout"] ? { barrierTimeoutMs: Number(args["barrier-timeout"]) } : {}),
});
await serveRunner(workspace, master, { wsPort: master.wsPort, pid: Deno.pid }, {
  status: () => master.status(),
  conflicts: () => master.conflicts(),
  "set-floor": (sequence) => {
    workspace.store.setMeta(HISTORY_FLOOR_META, sequence);
    return null;
  },
});
