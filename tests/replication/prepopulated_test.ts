/**
 * A replica started on a folder that already holds the master's files (copied there by
 * rsync, say): each file is taken for a local change, written back, and one the master
 * already holds as it is conflicts with nothing, a link out of the tree included. Only a
 * file that differs is a conflict.
 */
import { put } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import { assertEquals } from "./_assert.ts";
import {
  pseudoRandomBytes,
  replicaStatus,
  startMaster,
  startReplica,
  stopPeers,
  waitForSameTrees,
  withDirs,
} from "./_harness.ts";

Deno.test("a replica started on a copy of the master's tree records a conflict only for what differs", async () => {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    const files = 60;
    for (const dir of [m, r]) {
      for (let i = 0; i < files; i++) {
        await put(dir, `src/d${i % 6}/f${i}.bin`, pseudoRandomBytes(100 + i * 97, i + 1));
      }
      await Deno.chmod(`${dir}/src/d0/f0.bin`, 0o755);
      // The master records a link out of the tree but sends it to no replica (SECURITY.md);
      // the copy holds it already, so it is no change to write back either.
      await Deno.symlink("/etc/hostname", `${dir}/src/outside-link`);
    }
    // What the copy changed since, what only it holds, and what it lacks (never recorded
    // there, so no removal to send: the master's file arrives).
    await put(r, "src/d1/f1.bin", "edited in the copy\n");
    await put(r, "only-in-copy.txt", "new\n");
    await Deno.remove(`${r}/src/d2/f2.bin`);
    const master = await startMaster(m, `${base}/m.sock`);
    const replica = await startReplica(r, `${base}/m.sock`);
    try {
      await waitFor("every write-back answered", async () => {
        const status = await replicaStatus(replica);
        return status.journal.pending + status.journal.sent === 0 && status.connected;
      }, { timeoutMs: 60_000 });
      await waitForSameTrees([m, r], { peers: [master, replica], timeoutMs: 60_000 });
      const conflicts = await replica.command<{ path: string }[]>("conflicts");
      // The edit, made without having seen the master's version, is the one conflict.
      assertEquals(conflicts.map((c) => c.path), ["src/d1/f1.bin"]);
    } finally {
      await stopPeers(replica, master);
    }
  });
});
