/**
 * CheckpointWhileBusy (lib/db): the background checkpointer runs from `busy()` until a
 * quiet while after `idle()`, on a real database file and a real worker; the writer's own
 * automatic checkpoint (`wal_autocheckpoint`, 0 while the worker runs) tells which serves.
 */
import assert from "node:assert/strict";
import type { DatabaseSync } from "node:sqlite";
import { CheckpointWhileBusy, openDatabase } from "../../lib/db/mod.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";
import { autocheckpoint } from "../_helpers/wal_autocheckpoint.ts";

async function withDatabase(work: (db: DatabaseSync) => Promise<void>): Promise<void> {
  await withTempDir(async (dir) => {
    const db = openDatabase(`${dir}/t.db`);
    try {
      await work(db);
    } finally {
      db.close();
    }
  });
}

Deno.test("CheckpointWhileBusy runs the worker from busy() until a quiet while after idle()", () =>
  withDatabase(async (db) => {
    const checkpoints = new CheckpointWhileBusy(db, { idleMs: 50 });
    assert.equal(checkpoints.running, false);
    assert.equal(autocheckpoint(db), 1000);
    checkpoints.busy();
    await checkpoints.settled();
    assert.equal(checkpoints.running, true);
    assert.equal(autocheckpoint(db), 0, "the writer no longer checkpoints in its commits");
    checkpoints.idle();
    await waitFor("the worker stopped", () => !checkpoints.running, { timeoutMs: 10_000 });
    await checkpoints.settled();
    assert.equal(autocheckpoint(db), 1000, "the writer checkpoints in its commits again");
    // A next bulk starts a new worker.
    checkpoints.busy();
    await checkpoints.settled();
    assert.equal(checkpoints.running, true);
    await checkpoints.close();
    assert.equal(checkpoints.running, false);
    assert.equal(autocheckpoint(db), 1000);
  }));

Deno.test("CheckpointWhileBusy keeps the worker through a bulk that starts again before the quiet while ends", () =>
  withDatabase(async (db) => {
    const checkpoints = new CheckpointWhileBusy(db, { idleMs: 60_000 });
    checkpoints.busy();
    checkpoints.idle();
    checkpoints.busy(); // the stop asked for is called off
    checkpoints.idle(); // and asked for again, from now
    await checkpoints.settled();
    assert.equal(checkpoints.running, true);
    await checkpoints.close(); // stops it at once, whatever the quiet while
    assert.equal(checkpoints.running, false);
    assert.equal(autocheckpoint(db), 1000);
  }));

Deno.test("CheckpointWhileBusy stops the worker at once when asked to, even after a quiet while was asked for", () =>
  withDatabase(async (db) => {
    const checkpoints = new CheckpointWhileBusy(db, { idleMs: 60_000 });
    checkpoints.busy();
    checkpoints.idle(); // a minute from now
    await checkpoints.settled();
    assert.equal(checkpoints.running, true);
    checkpoints.idle(0); // sooner: wins
    await waitFor("the worker stopped", () => !checkpoints.running, { timeoutMs: 10_000 });
    await checkpoints.settled();
    assert.equal(autocheckpoint(db), 1000, "the writer checkpoints in its commits again");
    await checkpoints.close();
  }));

Deno.test("CheckpointWhileBusy starts nothing once closed, nor for a database not in a file", async () => {
  await withDatabase(async (db) => {
    const checkpoints = new CheckpointWhileBusy(db);
    await checkpoints.close();
    checkpoints.busy();
    await checkpoints.settled();
    assert.equal(checkpoints.running, false);
    assert.equal(autocheckpoint(db), 1000);
  });
  const memory = openDatabase(":memory:");
  try {
    const checkpoints = new CheckpointWhileBusy(memory);
    checkpoints.busy();
    await checkpoints.settled();
    assert.equal(checkpoints.running, false);
    await checkpoints.close();
  } finally {
    memory.close();
  }
});
