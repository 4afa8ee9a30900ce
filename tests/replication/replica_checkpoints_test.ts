/**
 * A replica's WAL checkpoints run on a worker during a large catch-up only (see
 * `CheckpointWhileBusy` in lib/db): an initial sync of more files than a large catch-up
 * starts it, a small one does not, and closing the replica stops it. The writer's
 * `wal_autocheckpoint` (0 while the worker runs) tells which serves; master and replica
 * run in this process over a real Unix socket.
 */
import assert from "node:assert/strict";
import { LARGE_CATCHUP } from "../../lib/replication/replica_state.ts";
import { put, withTempDir } from "../_helpers/temp_dir.ts";
import { withMasterAndReplica } from "./_in_process_pair.ts";
import { autocheckpoint } from "../_helpers/wal_autocheckpoint.ts";

for (
  const { files, large } of [{ files: LARGE_CATCHUP + 100, large: true }, {
    files: 20,
    large: false,
  }]
) {
  Deno.test(`an initial sync of ${files} files ${large ? "checkpoints on a worker until the replica closes" : "checkpoints in its commits"}`, () =>
    withTempDir(async (root) => {
      for (let i = 0; i < files; i++) await put(`${root}/m`, `d${i % 7}/f${i}.txt`, `file ${i}\n`);
      await withMasterAndReplica(root, {}, async ({ replicaSide, replica }) => {
        const synced = await replica.syncWait(60_000);
        assert.ok(synced.satisfied, JSON.stringify(synced));
        // The worker outlives the catch-up by a quiet while (CHECKPOINT_IDLE_MS, 10 s).
        assert.equal(autocheckpoint(replicaSide.store.db), large ? 0 : 1000);
        await replica.close();
        assert.equal(autocheckpoint(replicaSide.store.db), 1000);
      });
    }));
}
