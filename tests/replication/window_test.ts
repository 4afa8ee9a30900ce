/**
 * The master's window of unacknowledged notifications (PROTOCOL.md §3), over real sockets:
 * a raw client that does not acknowledge receives at most the window, then only heartbeats,
 * barrier answers and content until it acks; real replicas with a window far smaller than
 * their acknowledgement interval still sync, fetch content, and finish a full resync.
 */
import { ManualClock } from "../_helpers/manual_clock.ts";
import { put, withTempDir } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import { assert, assertEquals } from "./_assert.ts";
import { connectRawPeer, type RawPeer } from "./_raw_peer.ts";
import {
  pseudoRandomBytes,
  startMaster as startMasterProcess,
  startReplica,
  stopPeers,
  waitForSameTrees,
  withDirs,
} from "./_harness.ts";
import { sha256Hex } from "../../lib/cas/mod.ts";
import { connectUnix, listenUnix, startMaster, type Transport } from "../../lib/replication/mod.ts";
import { ReplicaCore } from "../../lib/replication/replica_core.ts";
import { ReplicaSession } from "../../lib/replication/replica_session.ts";
import { ACK_EVERY } from "../../lib/replication/replica_state.ts";
import { APPLY_BATCH } from "../../lib/replication/apply_batch.ts";
import { WINDOW_ITEMS } from "../../lib/replication/push_channel.ts";
import type { NotificationMessage, WireMessage } from "../../lib/wire/mod.ts";
import { Workspace } from "../../lib/workspace/mod.ts";

const HEARTBEAT_MS = 600_000;
const BARRIER_MS = 900_000;
const WINDOW = 4;

function notifications(peer: RawPeer): NotificationMessage[] {
  return peer.received.filter((m): m is NotificationMessage => m.type === "Notification");
}

function heartbeats(peer: RawPeer): number[] {
  return peer.received.flatMap((m) => m.type === "Heartbeat" ? [Number(m.agent_sequence)] : []);
}

function confirmations(peer: RawPeer): WireMessage[] {
  return peer.received.filter((m) => m.type === "BarrierConfirmation");
}

/**
 * Fires the master's heartbeat and waits for it: the sender sends in order, so what came
 * before the heartbeat is everything the master handed by then.
 */
async function nextHeartbeat(peer: RawPeer, clock: ManualClock): Promise<number> {
  const before = heartbeats(peer).length;
  clock.advance(HEARTBEAT_MS);
  await waitFor("a heartbeat", () => heartbeats(peer).length > before);
  return heartbeats(peer).at(-1)!;
}

function lastSequence(peer: RawPeer): number {
  return Number(notifications(peer).at(-1)!.sequence);
}

Deno.test("a replica that never acks gets the window and nothing more until it acks", async (t) => {
  await withTempDir(async (dir) => {
    const root = `${dir}/ws`;
    await Deno.mkdir(root);
    for (let i = 0; i < 10; i++) await Deno.writeTextFile(`${root}/f${i}.txt`, `file ${i}`);
    const large = pseudoRandomBytes(6000, 7); // over the inline limit: fetched
    await Deno.writeFile(`${root}/large.bin`, large);
    const workspace = await Workspace.open({ root });
    await workspace.scan();
    const clock = new ManualClock();
    const socket = `${dir}/m.sock`;
    const master = await startMaster({
      workspace,
      socketPath: socket,
      clock,
      heartbeatMs: HEARTBEAT_MS,
      handshakeTimeoutMs: 3_600_000,
      barrierTimeoutMs: BARRIER_MS,
      windowItems: WINDOW,
    });
    const peer = await connectRawPeer(socket);
    const current = workspace.store.sequence();
    try {
      await peer.transport.send({ type: "CatchupRequest", sandbox_id: "sb-w", since_sequence: 0n });

      await t.step("the replay stops at the window; heartbeats go on, certifying it", async () => {
        await waitFor("the window's notifications", () => notifications(peer).length === WINDOW);
        assertEquals(await nextHeartbeat(peer, clock), lastSequence(peer));
        assertEquals(notifications(peer).length, WINDOW);
        assertEquals(await nextHeartbeat(peer, clock), lastSequence(peer));
        assertEquals(notifications(peer).length, WINDOW);
      });

      await t.step("content and barrier answers are not held by the window", async () => {
        await peer.transport.send({ type: "ContentFetchRequest", content_hash: sha256Hex(large) });
        const answer = await waitFor(
          "the content answer",
          () => peer.received.find((m) => m.type === "ContentFetchResponse"),
        );
        assert(answer.type === "ContentFetchResponse");
        assertEquals(answer.content, large);
        await peer.transport.send({ type: "BarrierRequest", sequence: BigInt(current) });
        await waitFor("the barrier's deadline timer", () => clock.pending().length === 2);
        assertEquals(confirmations(peer), []); // not handed everything: not certified
        clock.advance(BARRIER_MS + 1);
        await waitFor("the refusal at its deadline", () => confirmations(peer).length === 1);
        assertEquals(confirmations(peer)[0], {
          type: "BarrierConfirmation",
          satisfied: false,
          current_sequence: BigInt(current),
        });
        assertEquals(notifications(peer).length, WINDOW);
      });

      await t.step("an ack of some opens the window by as many", async () => {
        const second = Number(notifications(peer)[1]!.sequence);
        await peer.transport.send({ type: "Ack", up_to_sequence: BigInt(second) });
        await waitFor("two more", () => notifications(peer).length === WINDOW + 2);
        assertEquals(await nextHeartbeat(peer, clock), lastSequence(peer));
        assertEquals(notifications(peer).length, WINDOW + 2);
        // An old ack releases nothing more.
        await peer.transport.send({ type: "Ack", up_to_sequence: 1n });
        assertEquals(await nextHeartbeat(peer, clock), lastSequence(peer));
        assertEquals(notifications(peer).length, WINDOW + 2);
      });

      await t.step(
        "acking what arrived brings the rest, then the caught-up heartbeat",
        async () => {
          await waitFor("the whole replay and the heartbeat saying so", async () => {
            await peer.transport.send({ type: "Ack", up_to_sequence: BigInt(lastSequence(peer)) });
            return heartbeats(peer).includes(current);
          });
          const paths = new Set(notifications(peer).map((m) => m.filepath));
          assertEquals(paths.size, notifications(peer).length, "each path once");
          assertEquals(paths.size, 11, "ten files and large.bin");
        },
      );

      await t.step("live notifications are held by the window too", async () => {
        await peer.transport.send({ type: "Ack", up_to_sequence: BigInt(lastSequence(peer)) });
        const before = notifications(peer).length;
        // Acks are read in order with the barrier behind them: once it is confirmed, the
        // window is empty.
        await peer.transport.send({ type: "BarrierRequest", sequence: BigInt(current) });
        await waitFor("the barrier confirmed", () => confirmations(peer).length === 2);
        for (let i = 0; i < WINDOW + 2; i++) {
          await workspace.writeBytes(`live${i}.txt`, new TextEncoder().encode(`live ${i}`));
        }
        const newest = workspace.store.sequence();
        await waitFor(
          "the window's live ones",
          () => notifications(peer).length === before + WINDOW,
        );
        assertEquals(await nextHeartbeat(peer, clock), lastSequence(peer));
        assertEquals(notifications(peer).length, before + WINDOW);
        assert(lastSequence(peer) < newest, "some held back");
        await peer.transport.send({ type: "Ack", up_to_sequence: BigInt(lastSequence(peer)) });
        await waitFor("the rest", () => notifications(peer).length === before + WINDOW + 2);
        assertEquals(lastSequence(peer), newest);
      });
    } finally {
      peer.transport.close();
      await peer.ended;
      await master.close();
      await workspace.close();
    }
  });
});

Deno.test("the default window holds two apply batches: the next streams while one is applied", () => {
  // The replica acknowledges a batch once it is applied: a window of one batch would make
  // the master wait for every batch, and the replica for every next one.
  assert(WINDOW_ITEMS >= 2 * APPLY_BATCH, `${WINDOW_ITEMS} < 2 x ${APPLY_BATCH}`);
});

Deno.test("replicas behind a window far below their ack interval sync, fetch and resync", async (t) => {
  assert(WINDOW < ACK_EVERY, "a window below the ack interval: acks come when the queue empties");
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    const sock = `${base}/m.sock`;
    for (let i = 0; i < 60; i++) {
      // Every third file over the inline limit: the applier waits for its content.
      const bytes = i % 3 === 0 ? pseudoRandomBytes(5000 + i, i + 1) : `small ${i}\n`;
      await put(m, `d${i % 4}/f${i}`, bytes);
    }
    const args = ["--window", String(WINDOW)];
    let master = await startMasterProcess(m, sock, { args });
    let replica = await startReplica(r, sock);
    try {
      await t.step("an initial sync", async () => {
        await waitForSameTrees([m, r], { peers: [master, replica] });
      });
      await t.step("a full resync from a replaced master", async () => {
        await stopPeers(replica, master);
        await put(m, "d0/new.txt", "only on the new master");
        await Deno.remove(`${m}/d1`, { recursive: true });
        await Deno.remove(`${m}/.chronicle`, { recursive: true });
        master = await startMasterProcess(m, sock, { args });
        replica = await startReplica(r, sock);
        await waitForSameTrees([m, r], { peers: [master, replica] });
        assert(master.logs().includes("replica must resync"), master.logs());
      });
    } finally {
      await stopPeers(replica, master);
    }
  });
});

Deno.test("a replica ends the connection of a master that ignores the window while it waits for content", async () => {
  await withTempDir(async (root) => {
    await Deno.mkdir(`${root}/r`);
    let sent = 0;
    // A master that streams notifications without end and never answers a content fetch:
    // the replica's applier waits on content, so reading cannot pause.
    const server = await listenUnix({
      path: `${root}/m.sock`,
      onTransport: async (master: Transport) => {
        const reading = (async () => {
          for await (const msg of master.messages()) {
            if (msg.type === "CatchupRequest") break;
          }
        })();
        await reading.catch(() => {});
        try {
          for (let i = 0; i < 100_000; i++) {
            await master.send({
              type: "Notification",
              sequence: BigInt(i + 1),
              filepath: `f/${i}`,
              content_hash: sha256Hex(new TextEncoder().encode(`content ${i}`)),
              size: 5000n,
              permissions: 0o100644n,
              is_deletion: false,
              inline_content: null,
            });
            sent++;
          }
        } catch {
          master.close(); // the replica ended the connection
        }
      },
    });
    const workspace = await Workspace.open({ root: `${root}/r` });
    const session = new ReplicaSession(
      new ReplicaCore({ workspace, heartbeatMs: 200 }),
      await connectUnix(`${root}/m.sock`),
    );
    const ended = session.run();
    try {
      const reason = await waitFor("the replica to leave", () => session.closeReason);
      assert(/does not keep its window/.test(reason), reason);
      assert(sent > 32_768 && sent < 100_000, `${sent} sent before the replica left`);
    } finally {
      session.close("test done");
      await ended;
      await server.close();
      await workspace.close();
    }
  });
});
