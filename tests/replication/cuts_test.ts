/**
 * Progress under frequent cuts: a replica catching up from zero through a relay that cuts
 * every connection within 60 KB must move forward on every few connections (what has
 * arrived is applied and kept; the next catch-up resumes after it), never go back, and
 * end with the master's tree. Master and replica are separate processes.
 */
import { sha256Hex } from "../../lib/cas/mod.ts";
import { put } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import { assert, assertEquals } from "./_assert.ts";
import { CuttingProxy } from "./_cutting_proxy.ts";
import { prng } from "../wire/_vectors.ts";
import {
  type Peer,
  pseudoRandomBytes,
  replicaStatus,
  startMaster,
  startReplica,
  stopPeers,
  waitForSameTrees,
  withDirs,
} from "./_harness.ts";
import type { MasterStatus } from "../../lib/replication/mod.ts";

/** Largest number of bytes one connection carries (both directions) before it is cut. */
const CUT_EVERY = 60_000;
/**
 * Connections in a row allowed to end with the applied sequence where it was. One can
 * carry nothing useful (a cut after a few bytes), and one may be spent fetching content
 * the previous one announced; many in a row mean the replica is going round in circles.
 */
const STALLED_CONNECTIONS = 25;
/** The relay's seed (`CHRONICLE_CUTS_SEED` repeats a failed run's cuts). */
const SEED = Number(Deno.env.get("CHRONICLE_CUTS_SEED") ?? 20261124);

/** The master, the cutting relay and the replica behind it, for the test's `work`. */
interface CutPeers {
  master: Peer;
  replica: Peer;
  proxy: CuttingProxy;
}

/**
 * Runs `work` with a master on `m`, a relay cutting every connection within
 * {@linkcode CUT_EVERY} bytes (seeded by `CHRONICLE_CUTS_SEED`), and a replica on `r` behind
 * it, reconnecting at once; stops them all after.
 */
async function throughCuttingRelay(
  { base, m, r }: { base: string; m: string; r: string },
  work: (peers: CutPeers) => Promise<void>,
): Promise<void> {
  const sock = `${base}/m.sock`;
  const master = await startMaster(m, sock);
  const proxy = CuttingProxy.start({
    listen: `${base}/proxy.sock`,
    upstream: sock,
    seed: SEED,
    maxBytes: CUT_EVERY,
  });
  const replica = await startReplica(r, `${base}/proxy.sock`, {
    args: ["--backoff-max", "60"],
  });
  try {
    await work({ master, replica, proxy });
  } finally {
    try {
      await stopPeers(replica, master);
    } finally {
      proxy.close();
    }
  }
}

Deno.test("a replica catching up from zero through a relay cutting every 60 KB progresses on every few connections and converges", async () => {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    // Mostly small files (inline in their notifications), some fetched whole (4 to 30 KB,
    // each one fitting within a connection), empty ones, non-ASCII and deep paths.
    const random = prng(SEED);
    const files = 2600;
    for (let i = 0; i < files; i++) {
      const dir = `d${i % 37}/${i % 5 === 0 ? "ünïcødé/𝄞/" : ""}${i % 11 === 0 ? "a/b/c/d/" : ""}`;
      const kind = random();
      const size = kind < 0.03
        ? 0
        : kind < 0.9
        ? Math.floor(random() * 700)
        : 4096 + Math.floor(random() * 26_000);
      await put(m, `${dir}f${i}.bin`, pseudoRandomBytes(size, i + 1));
    }
    await throughCuttingRelay({ base, m, r }, async ({ master, replica, proxy }) => {
      const { sequence: target } = await master.command<MasterStatus>("status");
      let applied = 0;
      let acked = 0;
      let ackMoves = 0; // how often the master's record of what was applied moved forward
      let progressAt = 0; // the connection count when the applied sequence last moved
      const seen: string[] = [];
      let failure: string | null = null; // waitFor retries on a throw: end the wait instead
      const check = (ok: boolean, message: string) => {
        if (!ok) failure ??= message;
      };
      await waitFor("the replica to apply the master's sequence", async () => {
        const status = await replicaStatus(replica);
        const summary = (await master.command<MasterStatus>("status")).replicas
          .find((s) => s.sandboxId === status.sandboxId);
        const context = `seed ${SEED}; ${seen.slice(-8).join(" ")}`;
        check(status.appliedSequence >= applied, `applied went back: ${context}`);
        check((summary?.ackedSequence ?? 0) >= acked, `acked went back: ${context}`);
        if ((summary?.ackedSequence ?? 0) > acked) ackMoves++;
        acked = summary?.ackedSequence ?? 0;
        if (status.appliedSequence > applied) progressAt = status.connections;
        applied = status.appliedSequence;
        seen.push(`${status.connections}:${applied}`);
        check(
          status.connections - progressAt <= STALLED_CONNECTIONS,
          `no progress over ${STALLED_CONNECTIONS} connections (connection:applied ${context})`,
        );
        return failure !== null || applied >= target;
      }, { timeoutMs: 240_000, intervalMs: 10 });
      assert(failure === null, failure ?? "");
      assert(proxy.cuts >= 20, `only ${proxy.cuts} cuts: the test did not cut often`);
      // Acknowledged as it went, not only at the end.
      assert(ackMoves >= 5, `the acknowledged sequence moved only ${ackMoves} times while cut`);
      proxy.cutting = false;
      await waitForSameTrees([m, r], { peers: [master, replica], timeoutMs: 60_000 });
      await waitFor(
        "the master to record the replica's acknowledgement of everything",
        async () => {
          const { replicas } = await master.command<MasterStatus>("status");
          return replicas.some((s) => s.ackedSequence >= target);
        },
      );
    });
  });
});

Deno.test("a sandbox's backlog of write-backs gets through a relay cutting every 60 KB", async () => {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    // Written while the sandbox is away: one backlog of about 850 KB, each file fitting
    // within a connection, all of it far more than one connection carries.
    const files = 50;
    for (let i = 0; i < files; i++) {
      await put(r, `backlog/f${i}.bin`, pseudoRandomBytes(4096 + (i * 2_654_435) % 26_000, i + 1));
    }
    await throughCuttingRelay({ base, m, r }, async ({ master, replica, proxy }) => {
      // Sent as one batch on every connection, it was cut every time and never arrived.
      const tree = await waitForSameTrees([m, r], { peers: [master, replica], timeoutMs: 120_000 });
      assert(tree.size === files, `${tree.size} of ${files} files on both sides`);
      assert(proxy.cuts >= 10, `only ${proxy.cuts} cuts: the test did not cut often`);
    });
  });
});

/**
 * Writes in `dir` `small` files of 900 bytes around three that no connection through the
 * relay carries whole: one of 150 KB (sent whole at first), one nearly 1 MB, and one
 * chunked (4 MiB and more: chunks of 256 KiB and up). Their bytes are seeded from `seed`.
 */
async function putLargeBesideSmall(dir: string, small: number, seed: number): Promise<void> {
  for (let i = 0; i < small; i++) await put(dir, `small/f${i}.txt`, pseudoRandomBytes(900, i + 1));
  await put(dir, "large/a.bin", pseudoRandomBytes(150_000, seed + 1));
  await put(dir, "large/b.bin", pseudoRandomBytes(900_000, seed + 2));
  await put(dir, "large/c.bin", pseudoRandomBytes(4_300_000, seed + 3));
}

Deno.test("content larger than any connection carries gets through a relay cutting every 60 KB, in ranges", async () => {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    await putLargeBesideSmall(m, 20, 100);
    await throughCuttingRelay({ base, m, r }, async ({ master, replica, proxy }) => {
      const tree = await waitForSameTrees([m, r], {
        peers: [master, replica],
        timeoutMs: 240_000,
      });
      assertEquals(tree.size, 23);
      assert(proxy.cuts >= 100, `only ${proxy.cuts} cuts for 5.4 MB: the test did not cut`);
    });
  });
});

Deno.test("a sandbox's changes larger than any connection carries get through a relay cutting every 60 KB, in pieces", async () => {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    // Written while the sandbox is away.
    await putLargeBesideSmall(r, 10, 200);
    await throughCuttingRelay({ base, m, r }, async ({ master, replica, proxy }) => {
      // Each was sent whole on every connection, cut every time, and never arrived.
      const tree = await waitForSameTrees([m, r], {
        peers: [master, replica],
        timeoutMs: 240_000,
      });
      assertEquals(tree.size, 13);
      assert(proxy.cuts >= 80, `only ${proxy.cuts} cuts for 5.4 MB: the test did not cut`);
      const status = await replicaStatus(replica);
      assertEquals(status.conflicts, [], "every change accepted as it was");
    });
  });
});

Deno.test("a sandbox's read of content through the master gets through a relay cutting every 60 KB, in ranges", async () => {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    // Versions the sandbox never holds: replaced on the master before it first connects. A
    // read asked for whole was cut on every connection, and failed with the first cut.
    const old = {
      "b.bin": pseudoRandomBytes(900_000, 301),
      "c.bin": pseudoRandomBytes(4_300_000, 302),
    };
    for (const [name, bytes] of Object.entries(old)) await put(m, `large/${name}`, bytes);
    const first = await startMaster(m, `${base}/first.sock`);
    try {
      for (const name of Object.keys(old)) await put(m, `large/${name}`, `now ${name}\n`);
      await waitFor("the master to record the new versions", async () => {
        const { sequence } = await first.command<{ sequence: number }>("settle");
        return sequence >= 4;
      });
    } finally {
      await stopPeers(first);
    }
    await throughCuttingRelay({ base, m, r }, async ({ master, replica, proxy }) => {
      await waitForSameTrees([m, r], { peers: [master, replica], timeoutMs: 120_000 });
      for (const [name, bytes] of Object.entries(old)) {
        const cutsBefore = proxy.cuts;
        const hash = sha256Hex(bytes);
        const read = await replica.command<{ size: number; hash: string }>(`read ${hash}`, 240_000);
        assertEquals(read, { size: bytes.length, hash }, name);
        assert(
          proxy.cuts - cutsBefore >= 10,
          `only ${proxy.cuts - cutsBefore} cuts reading ${name}`,
        );
      }
    });
  });
});
