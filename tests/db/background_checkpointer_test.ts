import assert from "node:assert/strict";
import type { DatabaseSync } from "node:sqlite";
import { BackgroundCheckpointer, columns, inTransaction, openDatabase } from "../../lib/db/mod.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";
import { autocheckpoint } from "../_helpers/wal_autocheckpoint.ts";

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

/** The salts in the WAL's header, which change each time the WAL starts over. */
function walSalts(path: string): string {
  using file = Deno.openSync(`${path}-wal`, { read: true });
  const header = new Uint8Array(24);
  file.readSync(header);
  return [...header.subarray(16, 24)].join(",");
}

/** Bytes of the database file itself: only a checkpoint writes committed pages into it. */
function fileBytes(path: string): number {
  return Deno.statSync(path).size;
}

const ROW_PAGES_BYTES = 1200 * 4096;

Deno.test("the writer's commits never checkpoint; a stop runs the last checkpoint and hands them back", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/t.db`;
    const db = openDatabase(path);
    try {
      db.exec("CREATE TABLE t (n INTEGER PRIMARY KEY, data BLOB NOT NULL)");
      // A long interval: the worker has not run when the writer goes past the 1,000 pages
      // where SQLite would have checkpointed inside one of its commits.
      const checkpointer = BackgroundCheckpointer.start(db, { intervalMs: 60_000 });
      assert.equal(autocheckpoint(db), 0);
      commitRows(db, 1, 1500);
      assert.ok(walBytes(path) > ROW_PAGES_BYTES, `the WAL holds every commit (${walBytes(path)})`);
      assert.ok(fileBytes(path) < 100 * 4096, `nothing checkpointed (${fileBytes(path)})`);
      await checkpointer.stop(); // its last checkpoint copies them
      assert.ok(fileBytes(path) > ROW_PAGES_BYTES, `checkpointed on stop (${fileBytes(path)})`);
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

Deno.test("the worker checkpoints while the writer goes on, and the WAL is used again", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/t.db`;
    const db = openDatabase(path);
    try {
      db.exec("CREATE TABLE t (n INTEGER PRIMARY KEY, data BLOB NOT NULL)");
      const checkpointer = BackgroundCheckpointer.start(db, { intervalMs: 10 });
      commitRows(db, 1, 1500);
      const walAfterFirst = walBytes(path);
      // Once the worker has checkpointed the WAL whole, the next commit starts it over (new
      // salts in its header) instead of appending: nothing else checkpoints here.
      const salts = walSalts(path);
      let next = 1501;
      await waitFor("the WAL started over after the worker's checkpoint", () => {
        commitRows(db, next++, 1);
        return walSalts(path) !== salts;
      });
      commitRows(db, next, 1500);
      next += 1500;
      assert.ok(
        walBytes(path) < walAfterFirst * 1.2,
        `WAL of ${walBytes(path)} bytes, ${walAfterFirst} after the first 1,500 rows`,
      );
      await waitFor("the worker's later checkpoints", () => fileBytes(path) > 2 * ROW_PAGES_BYTES);
      assert.equal(checkpointer.running, true);
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
