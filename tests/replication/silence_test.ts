/**
 * A master that falls silent for a while, without closing anything (its machine saturated
 * by a large change with replicas on the same cores, or a link on which one large frame takes
 * longer than the limit to arrive), is left once, not at every stall: each connection left
 * for silence tolerates twice the silence of the one before (`nextSilenceMs`). Master and
 * replica are separate processes; a proxy holds back what the master sends while it stalls.
 */
import { assertEquals } from "../_helpers/assert.ts";
import { CuttingProxy } from "./_cutting_proxy.ts";
import { put } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import {
  startMaster,
  startReplica,
  stopPeers,
  waitForLive,
  waitForSameTrees,
  withDirs,
} from "./_harness.ts";

/** With heartbeats every 800 ms the first connection tolerates 4 s of silence (five). */
const HEARTBEAT_MS = 800;
/** Halfway between the first connection's limit and twice it: 2 s from either. */
const STALL_MS = 6000;

Deno.test("a master silent longer than the limit is left once, not at every stall", async () => {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    await put(m, "seed.txt", "before the stalls");
    const sock = `${base}/m.sock`;
    const master = await startMaster(m, sock);
    const relay = CuttingProxy.start({
      listen: `${base}/relay.sock`,
      upstream: sock,
      seed: 1,
      maxBytes: 1,
    });
    relay.cutting = false; // it only stalls
    const replica = await startReplica(r, `${base}/relay.sock`, {
      args: ["--heartbeat", String(HEARTBEAT_MS)],
    });
    try {
      await waitForSameTrees([m, r], { peers: [master, replica] });
      await waitForLive(replica);
      // The first stall outlasts the first connection's limit: the replica leaves it.
      await relay.stall(STALL_MS);
      await waitFor("the replica to connect again", () => relay.connections === 2, {
        timeoutMs: 60_000,
      });
      await waitForLive(replica);
      // The same stalls again: the second connection tolerates twice the silence.
      for (let i = 0; i < 2; i++) {
        await relay.stall(STALL_MS);
        await put(m, `after-stall-${i}.txt`, `written after stall ${i}`);
        await waitForSameTrees([m, r], { peers: [master, replica], timeoutMs: 60_000 });
      }
      assertEquals(
        relay.connections,
        2,
        `the replica left the master at a stall within the doubled limit\n${replica.logs()}`,
      );
      const log = replica.logs();
      assertEquals(log.match(/master silent for more than 4000 ms/g)?.length, 1, log);
    } finally {
      try {
        await stopPeers(replica, master);
      } finally {
        relay.close();
      }
    }
  });
});
