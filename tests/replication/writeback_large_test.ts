/**
 * A sandbox's file larger than one WebSocket message carries (64 MiB) gets written back,
 * in pieces, when both sides' write-back limit allows it: the limit is no longer capped by
 * the connection's largest message. Master and replica are separate processes.
 */
import { assertEquals } from "../_helpers/assert.ts";
import { put } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import { sha256Hex } from "../../lib/cas/mod.ts";
import {
  Peer,
  pseudoRandomBytes,
  replicaStatus,
  startMaster,
  stopPeers,
  waitForSameTrees,
  withDirs,
} from "./_harness.ts";

const MiB = 1024 * 1024;
/** Both sides' write-back limit: above what one WebSocket message carries. */
const LIMIT = 96 * MiB;

Deno.test("a file larger than one WebSocket message carries is written back in pieces", async () => {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    await put(m, "seed.txt", "before the large file");
    const master = await startMaster(m, `${base}/m.sock`, {
      args: ["--ws", "127.0.0.1:0", "--token", "s3cret", "--max-writeback", String(LIMIT)],
    });
    const replica = await Peer.start("ws-replica", "_replica.ts", [
      "--root",
      r,
      "--ws-connect",
      `ws://127.0.0.1:${master.info.wsPort}/`,
      "--token",
      "s3cret",
      "--max-writeback",
      String(LIMIT),
    ]);
    try {
      await waitForSameTrees([m, r], { peers: [master, replica] });
      const bytes = pseudoRandomBytes(66 * MiB + 12_345, 17);
      await put(r, "out/dataset.bin", bytes);
      await waitFor("the large file on the master", async () => {
        const found = await Deno.readFile(`${m}/out/dataset.bin`).catch(() => null);
        return found !== null && found.length === bytes.length;
      }, { timeoutMs: 60_000 });
      assertEquals(sha256Hex(await Deno.readFile(`${m}/out/dataset.bin`)), sha256Hex(bytes));
      const status = await replicaStatus(replica);
      assertEquals(status.refused, [], "nothing refused on the replica");
    } finally {
      await stopPeers(replica, master);
    }
  });
});
