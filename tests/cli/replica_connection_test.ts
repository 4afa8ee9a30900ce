import { ok, strictEqual } from "node:assert/strict";
import { syncWaitFailure } from "../../lib/cli/replication_commands.ts";
import { describeStatus, statusView } from "../../lib/cli/status_command.ts";
import { withUnreachableReplica } from "./_unreachable_replica.ts";
import { waitFor } from "../_helpers/wait_for.ts";

const NOT_IN_SYNC = { satisfied: false, appliedSequence: 0, masterSequence: 0 };

Deno.test("a replica that never reached its master says why in status and sync --wait, not lag 0", async () => {
  // What a master refusing the token looks like to the replica: every connection fails.
  await withUnreachableReplica(
    "Invalid status code: 401",
    async (root, _workspace, replica) => {
      await waitFor(
        "the first attempt to fail",
        () => replica.status().lastConnectionError !== null,
      );
      const status = replica.status();
      const lines = describeStatus(
        statusView({ running: true, workspace: root, replication: status }),
        Date.now(),
      );
      const text = lines.join("\n");
      ok(/^connection: +Invalid status code: 401$/m.test(text), text);
      ok(lines.includes("applied:          0 (nothing heard from the master yet)"), text);
      ok(!text.includes("lag 0"), text);
      const message = syncWaitFailure(60, NOT_IN_SYNC, { ...status });
      ok(message.includes("Invalid status code: 401"), message);
      ok(!message.includes("Is the master running?"), message);
    },
    "chronicle-replica-connection-",
  );
});

Deno.test("syncWaitFailure() names the last connection error when the replica reports one", async (t) => {
  const refused =
    "WebSocket handshake failed: Invalid status code: 401 (the master refused the token)";
  const table = [
    {
      description: "a last connection error",
      status: { connected: false, master: "ws://m", connections: 0, lastConnectionError: refused },
      expected: `Not in sync within 5 s: no connection to the master "ws://m": ${refused}`,
    },
    {
      description: "never connected, no error known (a daemon from before errors were kept)",
      status: { connected: false, master: "ws://m", connections: 0 },
      expected:
        `Not in sync within 5 s: no connection to the master "ws://m": never connected: is the master running, and is --token the master's? Chronicle's log says why`,
    },
    {
      description: "connected before, no error known: the master is likely gone",
      status: { connected: false, master: "ws://m", connections: 3 },
      expected:
        `Not in sync within 5 s: no connection to the master "ws://m" (this replica holds its sequence 0; the master's last heard was 0). Is the master running?`,
    },
    {
      description: "connected but slow",
      status: { connected: true, master: "ws://m", connections: 1 },
      expected: "Not in sync within 5 s: applied 0 of the master's 0",
    },
  ];
  for (const { description, status, expected } of table) {
    await t.step(description, () => strictEqual(syncWaitFailure(5, NOT_IN_SYNC, status), expected));
  }
  await t.step("status shows the error too", () => {
    const lines = describeStatus(
      statusView({
        running: true,
        workspace: "/w",
        replication: { ...table[0]!.status, appliedSequence: 0, masterSequence: 0 },
      }),
      Date.now(),
    );
    ok(lines.includes(`connection:       ${refused}`), lines.join("\n"));
  });
});
