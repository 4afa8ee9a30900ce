/**
 * A replica as its own process, for end-to-end tests and benchmarks:
 * `deno run -A tests/replication/_replica.ts --root DIR (--connect PATH | --ws-connect URL)
 * [--token T] [--sandbox-id ID] [--mode sandbox|local-sync] [--heartbeat MS]
 * [--debounce MS] [--ignore P]… [--to-replica P]… [--to-master P]… [--max-writeback N]
 * [--backoff-max MS] [--die-after-writeback]` (exit at once after sending the first `WriteBack`, to test a
 * crash whose answer is lost).
 * Prints `READY {…}` once started; then answers `status`, `sync-wait MS`, `settle`, `scan` and
 * `exit` on stdin (see `_runner_common.ts`).
 *
 * @module
 */
import {
  type Connector,
  connectUnix,
  type ReplicaMode,
  startReplica,
} from "../../lib/replication/mod.ts";
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
workspace.watch({ debounceMs: Number(args.debounce ?? 20) });
// A connector whose transport kills this process right after a WriteBack is written.
const dying: Connector | undefined = args["die-after-writeback"] && args.connect
  ? async () => {
    const transport = await connectUnix(args.connect!);
    const send = transport.send.bind(transport);
    transport.send = async (message) => {
      await send(message);
      if (!(message instanceof Uint8Array) && message.type === "WriteBack") Deno.exit(137);
    };
    return transport;
  }
  : undefined;
const replica = await startReplica({
  workspace,
  connect: args.connect,
  ...(dying ? { connector: dying } : {}),
  wsConnect: args["ws-connect"],
  token: args.token,
  sandboxId: args["sandbox-id"],
  mode: (args.mode ?? "sandbox") as ReplicaMode,
  heartbeatMs: Number(args.heartbeat ?? 200),
  backoffMinMs: 50,
  backoffMaxMs: Number(args["backoff-max"] ?? 1000),
  progress: false,
  ...(args["max-writeback"] ? { maxWritebackBytes: Number(args["max-writeback"]) } : {}),
});
let closing: Promise<void> | null = null;
const shutdown = () =>
  closing ??= (async () => {
    await replica.close();
    await workspace.close();
  })();
Deno.addSignalListener("SIGTERM", () => shutdown().then(() => Deno.exit(0)));
await ready({ sandboxId: replica.sandboxId, pid: Deno.pid });
await serveCommands(async (command, arg) => {
  switch (command) {
    case "status":
      return replica.status();
    case "sync-wait":
      return await replica.syncWait(Number(arg || 20000));
    case "settle":
      await workspace.settled();
      return { sequence: workspace.store.sequence() };
    case "scan":
      return { recorded: (await workspace.scan()).recorded.length };
    case "exit":
      await shutdown();
      return null;
    default:
      throw new Error(`unknown command "${command}"`);
  }
});
await shutdown();
Deno.exit(0);
