/**
 * A real master (real workspace, SQLite and CAS, a real Unix socket) run on a manual
 * clock: its handshake timeout, heartbeats and barrier deadlines happen only when the
 * test advances the clock, never by a real timer. The delays are far longer than any
 * wait of the test, so a real timer could not pass it.
 */
import { ManualClock } from "../_helpers/manual_clock.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";
import { connectRawPeer, type RawPeer } from "./_raw_peer.ts";
import { assert, assertEquals } from "./_assert.ts";
import { sha256Hex } from "../../lib/cas/mod.ts";
import { type MasterHandle, startMaster } from "../../lib/replication/mod.ts";
import type { WireMessage } from "../../lib/wire/mod.ts";
import { Workspace } from "../../lib/workspace/mod.ts";

const HANDSHAKE_MS = 3_600_000;
const HEARTBEAT_MS = 600_000;
const BARRIER_MS = 900_000;

interface Setup {
  master: MasterHandle;
  workspace: Workspace;
  socket: string;
  clock: ManualClock;
}

async function withClockedMaster(work: (setup: Setup) => Promise<void>): Promise<void> {
  await withTempDir(async (dir) => {
    const root = `${dir}/ws`;
    await Deno.mkdir(root);
    await Deno.writeTextFile(`${root}/a.txt`, "one");
    const workspace = await Workspace.open({ root });
    await workspace.scan();
    const socket = `${dir}/m.sock`;
    const clock = new ManualClock();
    const master = await startMaster({
      workspace,
      socketPath: socket,
      clock,
      heartbeatMs: HEARTBEAT_MS,
      handshakeTimeoutMs: HANDSHAKE_MS,
      barrierTimeoutMs: BARRIER_MS,
    });
    try {
      await work({ master, workspace, socket, clock });
    } finally {
      await master.close();
      await workspace.close();
    }
  });
}

/** Waits until the clock holds a timer due in `ms` (the master armed it). */
async function armed(clock: ManualClock, ms: number, what: string): Promise<void> {
  await waitFor(what, () => clock.pending().includes(ms));
}

function heartbeats(peer: RawPeer): bigint[] {
  return peer.received.flatMap((m) => m.type === "Heartbeat" ? [m.agent_sequence] : []);
}

function confirmations(peer: RawPeer): WireMessage[] {
  return peer.received.filter((m) => m.type === "BarrierConfirmation");
}

Deno.test("a master on a manual clock closes a silent connection only when its timeout passes", async () => {
  await withClockedMaster(async ({ socket, clock }) => {
    const silent = await connectRawPeer(socket);
    await armed(clock, HANDSHAKE_MS, "the handshake timer armed");
    clock.advance(HANDSHAKE_MS - 1);
    // One message before the deadline would disarm it; nothing was said, so it still waits.
    assertEquals(silent.closed(), false);
    assertEquals(clock.pending(), [1]);
    clock.advance(1);
    await waitFor("the silent connection closed", () => silent.closed());
    silent.transport.close();

    // A connection that speaks in time disarms its handshake timer.
    const speaking = await connectRawPeer(socket);
    await armed(clock, HANDSHAKE_MS, "the second handshake timer armed");
    await speaking.transport.send({
      type: "CatchupRequest",
      sandbox_id: "sb-speaks",
      since_sequence: 0n,
    });
    await waitFor("the catch-up answered", () => heartbeats(speaking).length > 0);
    assert(!clock.pending().includes(HANDSHAKE_MS), "the handshake timer is disarmed");
    clock.advance(HANDSHAKE_MS);
    // Heartbeats fire meanwhile; the connection stays open.
    await waitFor("a heartbeat from the timer", () => heartbeats(speaking).length > 1);
    assertEquals(speaking.closed(), false);
    speaking.transport.close();
    await speaking.ended;
  });
});

Deno.test("a master on a manual clock: heartbeats, barriers, acks and write-backs", async (t) => {
  await withClockedMaster(async ({ master, workspace, socket, clock }) => {
    const peer = await connectRawPeer(socket);
    await peer.transport.send({ type: "CatchupRequest", sandbox_id: "sb-1", since_sequence: 0n });

    await t.step("the catch-up replays, then one heartbeat says it is caught up", async () => {
      await waitFor("the replay's heartbeat", () => heartbeats(peer).length === 1);
      assertEquals(peer.received.map((m) => m.type), ["Notification", "Heartbeat"]);
      assertEquals(heartbeats(peer), [1n]);
      assertEquals(clock.pending(), [HEARTBEAT_MS]);
    });

    await t.step("a new iteration is pushed live; the heartbeat waits for the clock", async () => {
      await workspace.writeBytes("b.txt", new TextEncoder().encode("two"));
      await waitFor("b.txt pushed", () => peer.received.length === 3);
      const pushed = peer.received[2]!;
      assert(pushed.type === "Notification" && pushed.filepath === "b.txt");
      assertEquals(heartbeats(peer), [1n]); // no timer fired: no other heartbeat
      clock.advance(HEARTBEAT_MS);
      await waitFor("the timer's heartbeat", () => heartbeats(peer).length === 2);
      assertEquals(heartbeats(peer), [1n, 2n]);
    });

    await t.step("an ack is recorded", async () => {
      await peer.transport.send({ type: "Ack", up_to_sequence: 2n });
      await waitFor(
        "the ack recorded",
        () => master.status().replicas.some((r) => r.sandboxId === "sb-1" && r.ackedSequence === 2),
      );
    });

    await t.step("a reached barrier is confirmed at once, certifying", async () => {
      await peer.transport.send({ type: "BarrierRequest", sequence: 2n });
      await waitFor("the confirmation", () => confirmations(peer).length === 1);
      assertEquals(confirmations(peer), [{
        type: "BarrierConfirmation",
        satisfied: true,
        current_sequence: 2n,
      }]);
    });

    await t.step("a barrier the master never reaches is refused at its deadline", async () => {
      await peer.transport.send({ type: "BarrierRequest", sequence: 99n });
      await armed(clock, BARRIER_MS + 1, "the barrier's deadline timer");
      clock.advance(BARRIER_MS);
      // A millisecond early: its timer has not fired, and nothing was answered.
      assert(clock.pending().includes(1), "the barrier timer still armed");
      assertEquals(confirmations(peer).length, 1);
      clock.advance(1);
      await waitFor("the refusal", () => confirmations(peer).length === 2);
      assertEquals(confirmations(peer)[1], {
        type: "BarrierConfirmation",
        satisfied: false,
        current_sequence: 2n,
      });
      assert(!clock.pending().includes(1), "no barrier timer left");
    });

    await t.step("a write-back is applied and answered", async () => {
      const bytes = new TextEncoder().encode("from the replica");
      await peer.transport.send({
        type: "WriteBack",
        sandbox_id: "sb-1",
        entries: [{
          local_seq: 1n,
          filepath: "c.txt",
          operation: { type: "Write" },
          content_hash: sha256Hex(bytes),
          content_bytes: bytes,
          size: BigInt(bytes.length),
          permissions: 0o100644n,
          is_deletion: false,
          master_rowid_seen: 0n,
        }],
      });
      const answer = await waitFor(
        "the write-back answered",
        () => peer.received.find((m) => m.type === "WriteBackResult"),
      );
      assert(answer.type === "WriteBackResult");
      assertEquals(answer.rejected, []);
      assertEquals(answer.accepted.length, 1);
      assertEquals(await Deno.readTextFile(`${workspace.root}/c.txt`), "from the replica");
    });

    peer.transport.close();
    await peer.ended;
  });
});
