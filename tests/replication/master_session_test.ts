/**
 * The master's per-connection session over a real Unix socket, against a real master on a
 * real workspace: what its state machine decides reaches the connection (answers, closes,
 * recorded acknowledgements, a replaced connection).
 */
import { waitFor } from "../_helpers/wait_for.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";
import { connectRawPeer } from "./_raw_peer.ts";
import { assertEquals } from "./_assert.ts";
import { type MasterHandle, startMaster } from "../../lib/replication/mod.ts";
import type { WireMessage } from "../../lib/wire/mod.ts";
import { Workspace } from "../../lib/workspace/mod.ts";

async function withMaster(
  work: (master: MasterHandle, socket: string) => Promise<void>,
): Promise<void> {
  await withTempDir(async (dir) => {
    const root = `${dir}/ws`;
    await Deno.mkdir(root);
    await Deno.writeTextFile(`${root}/a.txt`, "one");
    const workspace = await Workspace.open({ root });
    await workspace.scan();
    const socket = `${dir}/m.sock`;
    const master = await startMaster({ workspace, socketPath: socket, heartbeatMs: 50 });
    try {
      await work(master, socket);
    } finally {
      await master.close();
      await workspace.close();
    }
  });
}

const catchup = (sandboxId: string): WireMessage => ({
  type: "CatchupRequest",
  sandbox_id: sandboxId,
  since_sequence: 0n,
});

Deno.test("MasterSession applies what its state machine decides, on a real connection", async (t) => {
  const closing: {
    description: string;
    input: WireMessage[];
    expected: { acked: number | null };
  }[] = [
    {
      description: "an Ack before the catch-up closes the connection",
      input: [{ type: "Ack", up_to_sequence: 1n }],
      expected: { acked: null },
    },
    {
      description: "a message only a master sends closes the connection",
      input: [{ type: "Heartbeat", agent_sequence: 1n, agent_iteration: 1n }],
      expected: { acked: null },
    },
    {
      description: "an Ack after a write-back but before the catch-up closes the connection",
      input: [{ type: "WriteBack", sandbox_id: "sb-early", entries: [] }, {
        type: "Ack",
        up_to_sequence: 1n,
      }],
      expected: { acked: null },
    },
    {
      description: "a sandbox id changed on one connection closes it, after the ack it recorded",
      input: [catchup("sb-change"), { type: "Ack", up_to_sequence: 1n }, {
        type: "WriteBack",
        sandbox_id: "sb-other",
        entries: [],
      }],
      expected: { acked: 1 },
    },
  ];
  await withMaster(async (master, socket) => {
    for (const { description, input, expected } of closing) {
      await t.step(description, async () => {
        const peer = await connectRawPeer(socket);
        for (const message of input) await peer.transport.send(message);
        await waitFor("the master to close the connection", () => peer.closed());
        peer.transport.close();
        const replica = master.status().replicas.find((r) => r.sandboxId === "sb-change");
        assertEquals(replica?.ackedSequence ?? null, expected.acked);
      });
    }

    await t.step(
      "a catch-up is answered by the replay, then a heartbeat certifying it",
      async () => {
        const peer = await connectRawPeer(socket);
        await peer.transport.send(catchup("sb-replay"));
        // A heartbeat certifies what was sent before it: the file's notification comes first.
        const certified = (m: WireMessage) => m.type === "Heartbeat" && m.agent_sequence === 1n;
        await waitFor("a heartbeat through the replay", () => peer.received.some(certified));
        const notified = peer.received.findIndex((m) =>
          m.type === "Notification" && m.filepath === "a.txt"
        );
        assertEquals(notified >= 0 && notified < peer.received.findIndex(certified), true);
        await peer.transport.send({ type: "Ack", up_to_sequence: 1n });
        await waitFor(
          "the ack recorded",
          () =>
            master.status().replicas.some((r) =>
              r.sandboxId === "sb-replay" && r.connected && r.ackedSequence === 1
            ),
        );
        peer.transport.close();
        await peer.ended;
      },
    );

    await t.step("a newer connection of the same sandbox id replaces the older", async () => {
      const older = await connectRawPeer(socket);
      await older.transport.send(catchup("sb-twice"));
      await waitFor("the older connection served", () => older.received.length > 0);
      const newer = await connectRawPeer(socket);
      await newer.transport.send(catchup("sb-twice"));
      await waitFor("the older connection closed", () => older.closed());
      await waitFor(
        "the newer connection served",
        () => newer.received.some((m) => m.type === "Heartbeat"),
      );
      newer.transport.close();
      older.transport.close();
      await newer.ended;
    });
  });
});
