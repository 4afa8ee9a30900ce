/**
 * A replica as its own process, for end-to-end tests and benchmarks:
 * `deno run -A tests/replication/_replica.ts --root DIR (--connect PATH | --ws-connect URL)
 * [--token T] [--sandbox-id ID] [--mode sandbox|local-sync] [--heartbeat MS]
 * [--debounce MS] [--ignore P]… [--to-replica P]… [--to-master P]… [--max-writeback N]
 * [--backoff-max MS] [--die-after-writeback] [--die-after-ack N]` (exit at once after sending
 * the first `WriteBack`, to test a crash whose answer is lost; or after the first `Ack` past
 * sequence N, to crash in the middle of a catch-up).
 * Prints `READY {…}` once started; then answers `status`, `sync-wait MS`, `settle`, `scan`,
 * `history PATH`, `changes SINCE`, `conflicts`, `missing HASH…`, `read HASH` (a content read
 * through the store's CAS, as a history read does: its size and the SHA-256 of what was read)
 * and `exit` on stdin (see `_runner_common.ts`).
 *
 * @module
 */
import {
  ConflictLog,
  type Connector,
  connectUnix,
  type ReplicaMode,
  startReplica,
} from "../../lib/replication/mod.ts";
import { sha256Hex } from "../../lib/cas/mod.ts";
import { openRunnerWorkspace, runnerArgs, serveRunner } from "./_runner_common.ts";

const args = runnerArgs(Deno.args);
const workspace = await openRunnerWorkspace(args);
// A connector whose transport kills this process right after a WriteBack is written, or
// (`--die-after-ack N`) right after the first Ack past sequence N is written: a point in the
// middle of a long catch-up that does not depend on how fast a test polls.
const dieAfterAck = args["die-after-ack"] === undefined ? undefined : Number(args["die-after-ack"]);
const dying: Connector | undefined =
  (args["die-after-writeback"] || dieAfterAck !== undefined) && args.connect
    ? async () => {
      const transport = await connectUnix(args.connect!);
      const send = transport.send.bind(transport);
      transport.send = async (message) => {
        await send(message);
        if (message instanceof Uint8Array) return;
        if (message.type === "WriteBack" && args["die-after-writeback"]) Deno.exit(137);
        if (
          message.type === "Ack" && dieAfterAck !== undefined &&
          message.up_to_sequence > BigInt(dieAfterAck)
        ) Deno.exit(137);
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
await serveRunner(workspace, replica, { sandboxId: replica.sandboxId, pid: Deno.pid }, {
  status: () => replica.status(),
  "sync-wait": (ms) => replica.syncWait(Number(ms || 20000)),
  scan: async () => ({ recorded: (await workspace.scan()).recorded.length }),
  // Every kept rejection, resolved ones included (`status` lists only the latest 100).
  conflicts: () => new ConflictLog(workspace.store.db).list({ limit: 1_000_000 }),
  read: async (hash) => {
    const bytes = await workspace.cas.readBytes(hash);
    return { size: bytes.length, hash: sha256Hex(bytes) };
  },
});
