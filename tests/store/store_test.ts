import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { DatabaseError, migrate } from "../../lib/db/mod.ts";
import { STORE_MIGRATIONS } from "../../lib/store/schema.ts";
import { type Iteration, Store } from "../../lib/store/mod.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

const H1 = "1".repeat(64);
const H2 = "2".repeat(64);
const H3 = "3".repeat(64);

function withStore(fn: (store: Store, dir: string) => void | Promise<void>): Promise<void> {
  return withTempDir(async (dir) => {
    const store = Store.open(`${dir}/chronicle.db`);
    try {
      await fn(store, dir);
    } finally {
      store.close();
    }
  }, "chronicle-store-");
}

const file = (path: string, hash: string, mode = 0o100644) => ({
  path,
  hash,
  size: 10,
  mode,
  deleted: false,
});

Deno.test("Store.record() numbers iterations per path and sequences globally", () =>
  withStore((store) => {
    store.record([file("a", H1), file("b", H1)]);
    store.record([file("a", H2)]);
    const history = store.history("a");
    assert.deepEqual(history.map((i) => [i.iteration, i.sequence, i.hash]), [[1, 1, H1], [
      2,
      3,
      H2,
    ]]);
    assert.deepEqual(store.sequence(), 3);
    assert.deepEqual(store.latest("b")?.iteration, 1);
    assert.deepEqual(store.iteration("a", 2)?.hash, H2);
    assert.deepEqual(store.iteration("a", 3), undefined);
    assert.deepEqual(store.bySequence(2)?.path, "b");
  }));

Deno.test("Store.record() skips changes identical to the latest iteration", () =>
  withStore((store) => {
    assert.deepEqual(store.record([file("a", H1)]).length, 1);
    assert.deepEqual(store.record([file("a", H1)]).length, 0, "same content, same mode");
    assert.deepEqual(store.record([file("a", H1, 0o100755)]).length, 1, "mode change counts");
    const del = { path: "a", hash: "", size: 0, mode: 0, deleted: true };
    assert.deepEqual(store.record([del]).length, 1);
    assert.deepEqual(store.record([del]).length, 0, "deleting a deleted path");
    assert.deepEqual(
      store.record([{ ...del, path: "never" }]).length,
      0,
      "deleting an unknown path",
    );
    assert.deepEqual(
      store.record([file("a", H1)])[0]?.iteration,
      4,
      "re-creation continues numbering",
    );
  }));

Deno.test("Store.record() numbers a path changed twice in one batch from its own first change", () =>
  withStore((store) => {
    const del = { path: "a", hash: "", size: 0, mode: 0, deleted: true };
    const recorded = store.record([file("a", H1), del, file("a", H2), file("a", H2)]);
    assert.deepEqual(recorded.map((i) => [i.iteration, i.hash, i.deleted]), [
      [1, H1, false],
      [2, "", true],
      [3, H2, false],
    ]);
    assert.deepEqual(store.latest("a")?.iteration, 3);
  }));

Deno.test("Store.latestOf() answers the latest iteration of each known path, as latest() does", () =>
  withStore((store) => {
    store.record([file("a", H1), file("b/c", H1)]);
    store.record([file("a", H2), { path: "b/c", hash: "", size: 0, mode: 0, deleted: true }]);
    const found = store.latestOf(["a", "b/c", "unknown", "a"]);
    assert.deepEqual([...found.keys()].sort(), ["a", "b/c"]);
    for (const path of ["a", "b/c"]) assert.deepEqual(found.get(path), store.latest(path), path);
    assert.deepEqual(store.latestOf([]).size, 0);
  }));

Deno.test("Store.list() gives the live tree now, at a sequence, and under a folder", () =>
  withStore((store) => {
    store.record([file("src/a.ts", H1), file("src/b/c.ts", H1), file("srcx", H1), file("top", H1)]);
    const before = store.sequence();
    store.record([{ path: "src/a.ts", hash: "", size: 0, mode: 0, deleted: true }]);
    store.record([file("src/b/c.ts", H2)]);
    const paths = (list: Iteration[]) => list.map((i) => `${i.path}:${i.hash[0]}`);
    assert.deepEqual(paths(store.list()), ["src/b/c.ts:2", "srcx:1", "top:1"]);
    assert.deepEqual(paths(store.list({ dir: "src" })), ["src/b/c.ts:2"]);
    assert.deepEqual(paths(store.list({ atSequence: before })), [
      "src/a.ts:1",
      "src/b/c.ts:1",
      "srcx:1",
      "top:1",
    ]);
    assert.deepEqual(paths(store.list({ atSequence: before, dir: "src" })), [
      "src/a.ts:1",
      "src/b/c.ts:1",
    ]);
    assert.deepEqual(store.list({ atSequence: 0 }), []);
  }));

Deno.test("Store.changesSince() and latestSince() replay changes in sequence order", () =>
  withStore((store) => {
    store.record([file("a", H1)]);
    store.record([file("b", H1)]);
    store.record([file("a", H2)]);
    store.record([file("a", H3)]);
    assert.deepEqual(store.changesSince(1).map((i) => i.sequence), [2, 3, 4]);
    assert.deepEqual(store.changesSince(1, { limit: 2 }).map((i) => i.sequence), [2, 3]);
    assert.deepEqual(store.latestSince(1).map((i) => `${i.path}@${i.sequence}`), ["b@2", "a@4"]);
    assert.deepEqual(store.latestSince(4), []);
    // In pages: each after the last one's highest sequence.
    assert.deepEqual(store.latestSince(0, { limit: 1 }).map((i) => i.sequence), [2]);
    assert.deepEqual(store.latestSince(2, { limit: 1 }).map((i) => i.sequence), [4]);
  }));

Deno.test("Store.open() migrates a version-1 database: paths are indexed by sequence, none lost", () =>
  withTempDir((dir) => {
    const path = `${dir}/chronicle.db`;
    const db = new DatabaseSync(path);
    migrate(db, "store", STORE_MIGRATIONS.slice(0, 1));
    db.exec(`INSERT INTO iterations (path, iteration, timestamp, size, hash, mode, deleted, origin)
             VALUES ('a', 1, 0, 10, '${H1}', ${0o100644}, 0, 'local');
             INSERT INTO paths VALUES ('a', 1, 1, 0)`);
    db.close();
    const store = Store.open(path);
    try {
      const index = store.db.prepare(
        "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = 'paths_sequence'",
      ).get();
      assert.ok(index, "paths_sequence was not created");
      // A replay page reads paths in sequence order from the index: no scan, no sort.
      const plan = store.db.prepare(
        `EXPLAIN QUERY PLAN SELECT i.sequence FROM paths p JOIN iterations i
         ON i.sequence = p.sequence WHERE p.sequence > ? ORDER BY p.sequence LIMIT ?`,
      ).all(0, 10).map((row) => String(row.detail)).join(" | ");
      assert.match(plan, /paths_sequence \(sequence>\?\)/);
      assert.doesNotMatch(plan, /TEMP B-TREE/);
      assert.deepEqual(store.latestSince(0).map((i) => i.path), ["a"]);
    } finally {
      store.close();
    }
  }, "chronicle-store-"));

Deno.test("Store keeps iterations across reopen, and notifies listeners after commit", async () => {
  await withTempDir((dir) => {
    const store = Store.open(`${dir}/c.db`);
    const seen: number[] = [];
    const off = store.onRecorded((recorded) => seen.push(...recorded.map((i) => i.sequence)));
    store.record([file("a", H1), file("b", H2)]);
    off();
    store.record([file("c", H3)]);
    assert.deepEqual(seen, [1, 2]);
    store.setMeta("k", "v");
    store.close();
    const again = Store.open(`${dir}/c.db`);
    assert.deepEqual(again.sequence(), 3);
    assert.deepEqual(again.getMeta("k"), "v");
    assert.deepEqual(again.addHashesTo(new Set()), new Set([H1, H2, H3]));
    assert.deepEqual(again.stats(), { paths: 3, iterations: 3, bytes: 30 });
    again.close();
  });
});

Deno.test("Store.sequenceAt() finds the sequence in force at a time", () =>
  withStore((store) => {
    store.record([{ ...file("a", H1), timestamp: 1000 }]);
    store.record([{ ...file("a", H2), timestamp: 2000 }]);
    assert.deepEqual(store.sequenceAt(999), 0);
    assert.deepEqual(store.sequenceAt(1500), 1);
    assert.deepEqual(store.sequenceAt(5000), 2);
  }));

Deno.test("Store.open() gives a one-line DatabaseError for a file that is not a database", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/bad.db`, "this is not sqlite ".repeat(100));
    assert.throws(
      () => Store.open(`${dir}/bad.db`),
      (error: unknown) =>
        error instanceof DatabaseError && !error.message.includes("\n") &&
        error.message.includes("bad.db"),
    );
  });
});

Deno.test("Store file states remember and forget what the scanner saw", () =>
  withStore((store) => {
    store.saveFileStates([{ path: "a", size: 1, mtimeMs: 2, ino: 3, mode: 0o100644, hash: H1 }]);
    assert.deepEqual(store.fileStates().get("a")?.hash, H1);
    store.saveFileStates([{ path: "a", forget: true }]);
    assert.ok(!store.fileStates().has("a"));
  }));

Deno.test("Store.fileStatesOf() answers the states of exactly the paths asked for", () =>
  withStore((store) => {
    const state = (path: string) => ({
      path,
      size: 1,
      mtimeMs: 2,
      ino: 3,
      mode: 0o100644,
      hash: H1,
    });
    store.saveFileStates(["a", "a/b", "c"].map(state));
    const found = store.fileStatesOf(["a", "c", "unknown", "a"]);
    assert.deepEqual([...found.keys()].sort(), ["a", "c"], "not what lies beneath a");
    assert.deepEqual(found.get("c"), state("c"));
    assert.equal(store.fileStatesOf([]).size, 0);
  }));

Deno.test("Store.liveStatesAfter() reads each live path with its record and file state, by path", () =>
  withStore((store) => {
    store.record([file("b", H1), file("a", H2, 0o100755), file("gone", H1)], [
      { path: "a", size: 1, mtimeMs: 2, ino: 3, mode: 0o100755, hash: H2 },
    ]);
    store.record([{ ...file("gone", ""), deleted: true }]);
    assert.deepEqual(store.liveStatesAfter(null, 10), [
      {
        path: "a",
        hash: H2,
        mode: 0o100755,
        state: { path: "a", size: 1, mtimeMs: 2, ino: 3, mode: 0o100755, hash: H2 },
      },
      { path: "b", hash: H1, mode: 0o100644, state: null },
    ]);
  }));

Deno.test("Store.pollExternal() announces iterations another connection recorded", async () => {
  await withTempDir((dir) => {
    const daemon = Store.open(`${dir}/c.db`);
    const other = Store.open(`${dir}/c.db`);
    try {
      const heard: string[] = [];
      daemon.onRecorded((recorded) =>
        heard.push(...recorded.map((i) => `${i.path}@${i.sequence}`))
      );
      daemon.record([file("a", H1)]);
      other.record([file("b", H1), file("c", H2)]);
      assert.deepEqual(heard, ["a@1"]);
      assert.deepEqual(daemon.pollExternal().map((i) => i.sequence), [2, 3]);
      assert.deepEqual(daemon.pollExternal(), [], "announced once");
      daemon.record([file("d", H3)]);
      assert.deepEqual(heard, ["a@1", "b@2", "c@3", "d@4"]);
    } finally {
      daemon.close();
      other.close();
    }
  });
});

Deno.test("Store.list() and fileStates() select a folder by range, not by prefix text", () =>
  withStore((store) => {
    store.record(["a", "a/b", "a/b/c", "a.txt", "a0", "a-b", "ab/c"].map((p) => file(p, H1)));
    assert.deepEqual(store.list({ dir: "a" }).map((i) => i.path), ["a", "a/b", "a/b/c"]);
    assert.deepEqual(store.list({ dir: "a/b" }).map((i) => i.path), ["a/b", "a/b/c"]);
    assert.deepEqual(store.list({ dir: "a", atSequence: 2 }).map((i) => i.path), ["a", "a/b"]);
    store.saveFileStates(
      ["a/x", "a0", "a.x"].map((path) => ({
        path,
        size: 1,
        mtimeMs: 1,
        ino: 1,
        mode: 1,
        hash: H1,
      })),
    );
    assert.deepEqual([...store.fileStates("a").keys()], ["a/x"]);
    assert.equal(store.fileStates().size, 3);
  }));

Deno.test("Store.withLiveInside() tells which paths hold live paths beneath them", () =>
  withStore((store) => {
    store.record(
      ["gone/x", "kept/a/b", "kept.txt", "kept0", "file", "sub/deep/y"].map((p) => file(p, H1)),
    );
    store.record([{ path: "gone/x", hash: "", size: 0, mode: 0, deleted: true }]);
    const table: Array<[string, boolean]> = [
      ["gone", false], // only a deleted path beneath
      ["kept", true],
      ["kept/a", true],
      ["kept/a/b", false], // a live file itself, nothing beneath
      ["file", false],
      ["sub", true],
      ["never", false],
      ["", false], // the root is no path to write
    ];
    const answer = store.withLiveInside(table.map(([path]) => path));
    for (const [path, expected] of table) assert.equal(answer.has(path), expected, path);
    assert.equal(store.withLiveInside([]).size, 0);
  }));

Deno.test("Store.changesSince() keeps one origin, or leaves some out", () =>
  withStore((store) => {
    const by = (path: string, origin: string) => ({ ...file(path, H1), origin });
    store.record([by("a", "local"), by("b", "master"), by("c", "restore"), by("d", "api")]);
    const paths = (options: Parameters<Store["changesSince"]>[1]) =>
      store.changesSince(0, options).map((i) => i.path);
    assert.deepEqual(paths({}), ["a", "b", "c", "d"]);
    assert.deepEqual(paths({ origin: "restore" }), ["c"]);
    assert.deepEqual(paths({ notOrigins: ["master", "api"] }), ["a", "c"]);
    assert.deepEqual(paths({ origin: "master", notOrigins: ["master"] }), []);
  }));

Deno.test("Store.record() runs `alongside` first in its transaction: committed and rolled back with it", () =>
  withStore((store) => {
    store.db.exec("CREATE TABLE extra (n INTEGER)");
    const count = () =>
      (store.db.prepare("SELECT count(*) AS n FROM extra").get() as { n: number }).n;
    const heard: number[] = [];
    store.onRecorded((recorded) => heard.push(...recorded.map((i) => i.sequence)));
    const seen: boolean[] = [];
    store.record([file("a", H1)], [], {
      alongside: () => {
        seen.push(store.db.isTransaction);
        store.db.prepare("INSERT INTO extra (n) VALUES (1)").run();
      },
    });
    assert.deepEqual(seen, [true], "run once, inside the transaction");
    assert.equal(count(), 1);
    assert.deepEqual(heard, [1]);
    // A record that fails (forced here by a trigger) takes
    // the alongside writes back with it, and no listener hears of anything.
    store.db.exec(
      "CREATE TRIGGER refuse BEFORE INSERT ON iterations WHEN NEW.path = 'refused' BEGIN SELECT RAISE(ABORT, 'refused'); END",
    );
    assert.throws(() =>
      store.record([file("refused", H2)], [], {
        alongside: () => store.db.prepare("INSERT INTO extra (n) VALUES (2)").run(),
      }), /refused/);
    assert.equal(count(), 1, "rolled back with the record");
    assert.deepEqual(heard, [1]);
    assert.equal(store.db.isTransaction, false);
  }));
