import assert from "node:assert/strict";
import type { DatabaseSync } from "node:sqlite";
import { BackgroundCheckpointer, columns, inTransaction, openDatabase } from "../../lib/db/mod.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

function autocheckpoint(db: DatabaseSync): number {
  return columns(db.prepare("PRAGMA wal_autocheckpoint").get()!).integer("wal_autocheckpoint");
}

function walBytes(path: string): number {
  return Deno.statSync(`${path}-wal`).size;
}

/** Commits `count` rows of 4 KiB, one transaction each, from `from` on. */
function commitRows(db: DatabaseSync, from: number, count: number): void {
  const insert = db.prepare("INSERT INTO t (n, data) VALUES (?, ?)");
  for (let n = from; n < from + count; n++) {
    inTransaction(db, () => insert.run(n, new Uint8Array(4096).fill(n % 251)));
  }
}

Deno.test("the writer's commits never checkpoint while the worker does, and it hands them back on stop", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/t.db`;
    const db = openDatabase(path);
    try {
      db.exec("CREATE TABLE t (n INTEGER PRIMARY KEY, data BLOB NOT NULL)");
      // A long interval first: the worker has not run when the writer goes past the
      // 1,000 pages where SQLite would have checkpointed inside one of its commits.
      const checkpointer = BackgroundCheckpointer.start(db, { intervalMs: 60_000 });
      assert.equal(autocheckpoint(db), 0);
      commitRows(db, 1, 1500);
      assert.ok(walBytes(path) > 1200 * 4096, `the WAL holds every commit (${walBytes(path)})`);
      assert.equal(checkpointer.frames, 0);
      await checkpointer.stop(); // its last checkpoint copies them
      assert.ok(checkpointer.frames >= 1500, `frames copied: ${checkpointer.frames}`);
      assert.equal(checkpointer.running, false);
      assert.equal(autocheckpoint(db), 1000);
      await checkpointer.stop(); // a second stop does nothing more
    } finally {
      db.close();
    }
    const again = openDatabase(path);
    try {
      assert.equal(columns(again.prepare("SELECT count(*) AS n FROM t").get()!).integer("n"), 1500);
    } finally {
      again.close();
    }
  });
});

Deno.test("the worker checkpoints while the writer commits, and the WAL stops growing", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/t.db`;
    const db = openDatabase(path);
    try {
      db.exec("CREATE TABLE t (n INTEGER PRIMARY KEY, data BLOB NOT NULL)");
      const checkpointer = BackgroundCheckpointer.start(db, { intervalMs: 10 });
      let next = 1;
      await waitFor("a checkpoint by the worker", () => {
        commitRows(db, next, 50);
        next += 50;
        return checkpointer.frames > 0;
      });
      // Once checkpointed, the writer starts the WAL over instead of appending: commits
      // go on for long after that and the file stays far below all they wrote.
      const written = next - 1;
      for (let round = 0; round < 40; round++) {
        commitRows(db, next, 50);
        next += 50;
        await new Promise((resolve) => setTimeout(resolve, 15));
      }
      assert.ok(
        walBytes(path) < (next - 1) * 4096 / 2,
        `WAL of ${walBytes(path)} bytes after ${
          next - 1
        } rows (${written} before the first checkpoint)`,
      );
      await checkpointer.stop();
      assert.equal(
        columns(db.prepare("SELECT count(*) AS n FROM t").get()!).integer("n"),
        next - 1,
      );
    } finally {
      db.close();
    }
  });
});

Deno.test("every commit returned before a kill -9 is there afterwards, checkpointed or not", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/t.db`;
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", new URL("./_checkpoint_child.ts", import.meta.url).pathname, path],
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    let committed = 0;
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let buffered = "";
    try {
      // Past several checkpoints of the worker, and killed in the middle of whatever it does.
      while (committed < 3000) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`The child ended after ${committed} commits`);
        buffered += value;
        const lines = buffered.split("\n");
        buffered = lines.pop()!;
        if (lines.length > 0) committed = Number(lines.at(-1));
      }
      child.kill("SIGKILL");
    } finally {
      await reader.cancel().catch(() => {});
      await child.status;
    }
    const db = openDatabase(path);
    try {
      const count = columns(db.prepare("SELECT count(*) AS n FROM t").get()!).integer("n");
      assert.ok(count >= committed, `${count} rows, ${committed} commits returned`);
      assert.equal(db.prepare("PRAGMA integrity_check").get()!.integrity_check, "ok");
      const whole = db.prepare("SELECT count(*) AS n FROM t WHERE n <= ? AND length(data) = 4096")
        .get(committed)!;
      assert.equal(columns(whole).integer("n"), committed, "every returned commit, whole");
    } finally {
      db.close();
    }
  });
});
