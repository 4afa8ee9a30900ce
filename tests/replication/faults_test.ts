/**
 * Faults, end to end: connections cut at random points, hostile or broken replicas, and
 * a replica too slow to keep up. Master and replicas are separate processes.
 */
import { put } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import { assert, assertEquals } from "./_assert.ts";
import { CuttingProxy } from "./_cutting_proxy.ts";
import {
  pseudoRandomBytes,
  startMaster,
  startReplica,
  stopPeers,
  waitForSameTrees,
  withDirs,
} from "./_harness.ts";
import { connectUnix, type MasterStatus } from "../../lib/replication/mod.ts";
import { encodeFrame, type WireMessage } from "../../lib/wire/mod.ts";

Deno.test("connections cut at random points, many times over, end with identical trees", async () => {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    const sock = `${base}/m.sock`;
    await put(m, "large.bin", pseudoRandomBytes(4_800_000, 11)); // chunked: cuts land mid-chunk
    for (let i = 0; i < 30; i++) await put(m, `small/${i}.txt`, `small ${i}\n`.repeat(i * 50));
    const master = await startMaster(m, sock);
    const proxy = CuttingProxy.start({
      listen: `${base}/proxy.sock`,
      upstream: sock,
      seed: 20251122,
      maxBytes: 2_500_000,
    });
    const replica = await startReplica(r, `${base}/proxy.sock`, { args: ["--backoff-max", "100"] });
    try {
      let round = 0;
      // Keep both sides changing while connections are being cut, 25 cuts over.
      await waitFor("25 cuts", async () => {
        round++;
        await put(m, `small/${round % 30}.txt`, `round ${round}\n`.repeat(round % 7 * 200));
        await put(r, `sandbox/${round % 5}.txt`, `sandbox round ${round}`);
        if (round % 10 === 0) await put(m, "large.bin", pseudoRandomBytes(4_800_000, round));
        return proxy.cuts >= 25;
      }, { timeoutMs: 90_000 });
      proxy.cutting = false;
      await waitForSameTrees([m, r], { peers: [master, replica], timeoutMs: 40_000 });
    } finally {
      try {
        await stopPeers(replica, master);
      } finally {
        proxy.close();
      }
    }
  });
});

Deno.test("a replica sending garbage, oversized frames, bad ids or escaping paths is dropped; others are served", async (t) => {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    const sock = `${base}/m.sock`;
    await put(m, "a.txt", "a");
    const master = await startMaster(m, sock);
    const replica = await startReplica(r, sock);
    const raw = async (bytes: Uint8Array) => {
      const conn = await Deno.connect({ transport: "unix", path: sock });
      let offset = 0;
      while (offset < bytes.length) offset += await conn.write(bytes.subarray(offset));
      // The master must close the connection: reading ends.
      const buffer = new Uint8Array(1024);
      while ((await conn.read(buffer).catch(() => null)) !== null) { /* drain */ }
      conn.close();
    };
    try {
      await waitForSameTrees([m, r], { peers: [master, replica] });
      await t.step("garbage", async () => {
        await raw(new TextEncoder().encode("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
        await waitFor(
          `the master to log "protocol error"`,
          () => master.logs().includes("protocol error"),
        );
      });
      await t.step("an oversized frame header", async () => {
        await raw(new Uint8Array([0xff, 0xff, 0xff, 0x7f, 1, 2, 3]));
        await waitFor(
          `the master to log "exceeds the limit"`,
          () => master.logs().includes("exceeds the limit"),
        );
      });
      await t.step("an invalid sandbox id", async () => {
        const frame = encodeFrame({
          type: "CatchupRequest",
          sandbox_id: "a/b",
          since_sequence: 0n,
        });
        await raw(frame);
        await waitFor(
          `the master to log "invalid sandbox id"`,
          () => master.logs().includes("invalid sandbox id"),
        );
      });
      await t.step("a write-back leaving the workspace", async () => {
        const client = await connectUnix(sock);
        await client.send({ type: "CatchupRequest", sandbox_id: "evil", since_sequence: 0n });
        await client.send({
          type: "WriteBack",
          sandbox_id: "evil",
          entries: [{
            local_seq: 1n,
            filepath: "../escape.txt",
            operation: { type: "Write" },
            content_hash: "ab".repeat(32),
            content_bytes: new Uint8Array([1]),
            size: 1n,
            permissions: 0o100644n,
            is_deletion: false,
            master_rowid_seen: 0n,
          }],
        });
        const got: WireMessage[] = [];
        for await (const message of client.messages()) got.push(message);
        const result = got.find((message) => message.type === "WriteBackResult");
        assert(result?.type === "WriteBackResult", JSON.stringify(got.map((g) => g.type)));
        assertEquals(result.accepted, []);
        assert(result.rejected[0]![1].startsWith("invalid path"), result.rejected[0]![1]);
        await waitFor(
          `the master to log "hostile write-back"`,
          () => master.logs().includes("hostile write-back"),
        );
      });
      // The real replica was never disturbed.
      await put(m, "after.txt", "still served");
      await waitForSameTrees([m, r], { peers: [master, replica] });
      const status = await master.command<MasterStatus>("status");
      assert(status.replicas.some((s) => s.connected && s.sandboxId !== "evil"));
    } finally {
      await stopPeers(replica, master);
    }
  });
});

Deno.test("a slow replica has its queue dropped and repaired by replay, without slowing others", async () => {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    const sock = `${base}/m.sock`;
    const master = await startMaster(m, sock, { args: ["--max-queue", "50"] });
    const replica = await startReplica(r, sock);
    const slow = await connectUnix(sock);
    try {
      await slow.send({ type: "CatchupRequest", sandbox_id: "slow", since_sequence: 0n });
      // 300 notifications of 3 KiB each overflow the socket buffers and then the queue.
      for (let i = 0; i < 300; i++) {
        await put(m, `f/${String(i).padStart(3, "0")}`, pseudoRandomBytes(3000, i + 1));
      }
      await waitForSameTrees([m, r], { peers: [master, replica] });
      const status = await master.command<MasterStatus>("status");
      const slowStatus = status.replicas.find((s) => s.sandboxId === "slow")!;
      assert(slowStatus.overflows! >= 1, JSON.stringify(slowStatus));
      assert(slowStatus.queued! <= 50, JSON.stringify(slowStatus));
      // Now the slow replica reads: it still gets the latest version of every path.
      const latest = new Map<string, string>();
      for await (const message of slow.messages()) {
        if (message.type === "Notification") latest.set(message.filepath, message.content_hash);
        if (message.type === "Heartbeat" && Number(message.agent_sequence) >= status.sequence) {
          break;
        }
      }
      assertEquals(latest.size, 300 + 1, "every file, and their folder f");
      // The master shuts down even while a replica that stopped reading blocks its writes.
      for (let i = 0; i < 120; i++) await put(m, `g/${i}`, pseudoRandomBytes(3000, 1000 + i));
      await master.command("settle");
    } finally {
      try {
        await stopPeers(replica, master);
      } finally {
        slow.close();
      }
    }
  });
});
