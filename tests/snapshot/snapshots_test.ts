import { assert, assertEquals, assertRejects, assertThrows } from "./_assert.ts";
import { join } from "node:path";
import {
  AmbiguousIdError,
  CaptureError,
  SnapshotContentError,
  TransactionStateError,
  UnknownIdError,
} from "../../lib/snapshot/mod.ts";
import { PathError } from "../../lib/paths/mod.ts";
import { permissions, withWorkspace } from "./_helpers.ts";

Deno.test("snapshot() of a write, then rollback() brings the old content back", async () => {
  await withWorkspace(async (ws) => {
    await ws.write("src/main.ts", "good", 0o640);
    const snap = await ws.snapshots.snapshot({
      type: "write_file",
      payload: { path: "src/main.ts", content: "ignored" },
    });
    assert(snap);
    assertEquals(snap.number, 1);
    assertEquals(snap.summary, "write_file: src/main.ts");
    assertEquals(snap.files.map((f) => [f.path, f.state, f.kind, f.size]), [
      ["src/main.ts", "present", "file", 4],
    ]);
    assertEquals(snap.files[0]!.mode, 0o100640);
    await ws.write("src/main.ts", "broken", 0o600);
    const result = await ws.snapshots.rollback(snap.id);
    assertEquals(result.problems, []);
    assertEquals(await ws.read("src/main.ts"), "good");
    assertEquals(await permissions(join(ws.root, "src/main.ts")), 0o640);
    assertEquals(ws.store.latest("src/main.ts")?.mode, 0o100640, "the rollback is recorded");
  });
});

Deno.test("rollback() of a creation removes the created file and folders", async () => {
  await withWorkspace(async (ws) => {
    const snap = await ws.snapshots.snapshot({
      type: "write_file",
      payload: { path: "new/deep/file.txt" },
    });
    assert(snap);
    assertEquals(snap.files.map((f) => [f.path, f.state]), [["new", "absent"]]);
    await ws.write("new/deep/file.txt", "created");
    const diff = await ws.snapshots.diff(snap.id);
    assertEquals(diff.changes.map((c) => [c.path, c.change]), [
      ["new", "created"],
      ["new/deep", "created"],
      ["new/deep/file.txt", "created"],
    ]);
    await ws.snapshots.rollback(snap.id);
    assertEquals(await ws.exists("new"), false);
  });
});

Deno.test("rollback() of a move puts both sides back", async () => {
  await withWorkspace(async (ws) => {
    await ws.write("a.txt", "A");
    await ws.write("b.txt", "old B");
    const snap = await ws.snapshots.snapshot({
      type: "move_file",
      payload: { source: "a.txt", destination: join(ws.root, "b.txt") },
    });
    assert(snap);
    assertEquals(snap.summary, "move_file: a.txt -> b.txt");
    await Deno.rename(join(ws.root, "a.txt"), join(ws.root, "b.txt"));
    const diff = await ws.snapshots.diff(snap.id);
    assertEquals(diff.changes.map((c) => [c.path, c.change]), [
      ["a.txt", "deleted"],
      ["b.txt", "modified"],
    ]);
    await ws.snapshots.rollback(snap.id);
    assertEquals(await ws.read("a.txt"), "A");
    assertEquals(await ws.read("b.txt"), "old B");
  });
});

Deno.test("one snapshot keeps two files with the same base name apart", async () => {
  await withWorkspace(async (ws) => {
    await ws.write("one/config.yaml", "first");
    await ws.write("two/config.yaml", "second");
    const snap = await ws.snapshots.snapshot({
      type: "move_file",
      payload: { path: "one/config.yaml", destination: "two/config.yaml" },
    });
    assert(snap);
    assertEquals(snap.files.map((f) => f.path), ["one/config.yaml", "two/config.yaml"]);
    await Deno.rename(join(ws.root, "one/config.yaml"), join(ws.root, "two/config.yaml"));
    await ws.snapshots.rollback(snap.id);
    assertEquals(await ws.read("one/config.yaml"), "first");
    assertEquals(await ws.read("two/config.yaml"), "second");
  });
});

Deno.test("rollback() can itself be rolled back", async () => {
  await withWorkspace(async (ws) => {
    await ws.write("f.txt", "v1");
    const snap = await ws.snapshots.snapshot({ type: "write_file", payload: { path: "f.txt" } });
    await ws.write("f.txt", "v2");
    await ws.write("extra.txt", "untouched");
    const first = await ws.snapshots.rollback(snap!.id);
    assertEquals(await ws.read("f.txt"), "v1");
    assert(first.snapshot);
    assertEquals(first.snapshot.actionType, "rollback");
    assertEquals(first.snapshot.summary, `rollback: ${snap!.id}`);
    const second = await ws.snapshots.rollback(first.snapshot.id.slice(0, 8));
    assertEquals(await ws.read("f.txt"), "v2");
    assertEquals(await ws.read("extra.txt"), "untouched");
    assertEquals(second.snapshot?.number, 3);
    assert((await ws.snapshots.verify()).ok);
  });
});

Deno.test("delete_dir captures the whole tree; rollback restores files, links, empty folders and modes", async () => {
  await withWorkspace(async (ws) => {
    await ws.write("tree/a.txt", "a", 0o600);
    await ws.write("tree/sub/b.sh", "#!/bin/sh", 0o755);
    await Deno.mkdir(join(ws.root, "tree/empty"));
    await Deno.symlink("a.txt", join(ws.root, "tree/link"));
    await Deno.chmod(join(ws.root, "tree/sub"), 0o700);
    const snap = await ws.snapshots.snapshot({ type: "delete_dir", payload: { path: "tree" } });
    assert(snap);
    assertEquals(snap.files.map((f) => `${f.path}:${f.kind}`), [
      "tree:dir",
      "tree/a.txt:file",
      "tree/empty:dir",
      "tree/link:symlink",
      "tree/sub:dir",
      "tree/sub/b.sh:file",
    ]);
    await Deno.remove(join(ws.root, "tree"), { recursive: true });
    const result = await ws.snapshots.rollback(snap.id);
    assertEquals(result.problems, []);
    assertEquals(await ws.read("tree/a.txt"), "a");
    assertEquals(await permissions(join(ws.root, "tree/a.txt")), 0o600);
    assertEquals(await permissions(join(ws.root, "tree/sub/b.sh")), 0o755);
    assertEquals(await permissions(join(ws.root, "tree/sub")), 0o700);
    assertEquals(await Deno.readLink(join(ws.root, "tree/link")), "a.txt");
    assert((await Deno.stat(join(ws.root, "tree/empty"))).isDirectory);
  });
});

Deno.test("rollback() of a create_dir removes what was put in the folder since, and that is undoable", async () => {
  await withWorkspace(async (ws) => {
    const snap = await ws.snapshots.snapshot({ type: "create_dir", payload: { path: "made" } });
    await ws.write("made/inside.txt", "later");
    const result = await ws.snapshots.rollback(snap!.id);
    assertEquals(await ws.exists("made"), false);
    await ws.snapshots.rollback(result.snapshot!.id);
    assertEquals(await ws.read("made/inside.txt"), "later");
  });
});

Deno.test("copy_file captures only the destination", async () => {
  await withWorkspace(async (ws) => {
    await ws.write("src.txt", "s");
    const snap = await ws.snapshots.snapshot({
      type: "copy_file",
      payload: { source: "src.txt", destination: "copy.txt" },
    });
    assertEquals(snap!.files.map((f) => [f.path, f.state]), [["copy.txt", "absent"]]);
  });
});

Deno.test("reads and unknown actions give no snapshot; off the record gives none either", async () => {
  await withWorkspace(async (ws) => {
    await ws.write("a.txt", "a");
    for (const type of ["read_file", "list_directory", "search_files", "shell"]) {
      assertEquals(await ws.snapshots.snapshot({ type, payload: { path: "a.txt" } }), null);
    }
    const action = { type: "write_file", payload: { path: "a.txt" } };
    assertEquals(await ws.snapshots.snapshot(action, { offTheRecord: true }), null);
    assertEquals(await ws.open({ offTheRecord: true }).snapshot(action), null);
    assertEquals(ws.snapshots.list(), []);
  });
});

Deno.test("snapshot() refuses paths outside the workspace, in the data folder or beyond a link", async (t) => {
  await withWorkspace(async (ws) => {
    const outside = await Deno.makeTempDir();
    try {
      await Deno.symlink(outside, join(ws.root, "escape"));
      const cases: Array<[string, unknown]> = [
        ["../etc/passwd", PathError],
        ["/etc/passwd", PathError],
        ["a/../../x", PathError],
        [".", PathError],
        [".chronicle/chronicle.db", PathError],
        ["escape/file.txt", CaptureError],
      ];
      for (const [path, errorClass] of cases) {
        await t.step(path, async () => {
          await assertRejects(
            () => ws.snapshots.snapshot({ type: "write_file", payload: { path } }),
            errorClass as new () => Error,
          );
        });
      }
      await assertRejects(
        () => ws.snapshots.snapshot({ type: "move_file", payload: { source: "a" } }),
        TypeError,
        'needs a "destination" string',
      );
      assertEquals(ws.snapshots.list(), [], "nothing recorded");
      const dirEntries = [];
      for await (const entry of Deno.readDir(outside)) dirEntries.push(entry);
      assertEquals(dirEntries, []);
    } finally {
      await Deno.remove(outside, { recursive: true });
    }
  });
});

Deno.test("IDs are accepted by unique prefix; unknown and short prefixes are clear errors", async () => {
  await withWorkspace(async (ws) => {
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const snap = await ws.snapshots.snapshot({ type: "write_file", payload: { path: `f${i}` } });
      ids.push(snap!.id);
    }
    const id = ids[0]!;
    assertEquals(ws.snapshots.get(id.toUpperCase()).id, id);
    const unique = shortestUniquePrefix(id, ids);
    assertEquals(ws.snapshots.get(unique).id, id);
    assertThrows(() => ws.snapshots.get("ffffffff-0000"), UnknownIdError, '"ffffffff-0000"');
    assertThrows(() => ws.snapshots.get("ab"), RangeError, "at least 4");
    assertThrows(() => ws.snapshots.get("zzzz"), RangeError);
  });
});

Deno.test("an ambiguous transaction prefix names its matches", async () => {
  await withWorkspace((ws) => {
    // Transactions are cheap: begin until two share a 4-character prefix.
    const seen = new Map<string, string>();
    let pair: [string, string] | undefined;
    while (!pair) {
      const { id } = ws.snapshots.beginTransaction();
      const other = seen.get(id.slice(0, 4));
      if (other) pair = [other, id];
      seen.set(id.slice(0, 4), id);
    }
    const error = assertThrows(
      () => ws.snapshots.transaction(pair![0].slice(0, 4)),
      AmbiguousIdError,
    );
    assert(error.message.includes(pair[0]) && error.message.includes(pair[1]));
    return Promise.resolve();
  });
});

Deno.test("a transaction of five actions is rolled back in one step", async () => {
  await withWorkspace(async (ws) => {
    await ws.write("keep.txt", "keep v1");
    await ws.write("edit.txt", "edit v1");
    await ws.write("gone.txt", "gone v1");
    const txn = ws.snapshots.beginTransaction();
    const step = async (
      type: string,
      payload: Record<string, string>,
      run: () => Promise<void>,
    ) => {
      const snap = await ws.snapshots.snapshot({ type, payload }, {
        transactionId: txn.id.slice(0, 6),
      });
      assertEquals(snap?.transactionId, txn.id);
      await run();
    };
    await step("write_file", { path: "edit.txt" }, () => ws.write("edit.txt", "edit v2"));
    await step("write_file", { path: "edit.txt" }, () => ws.write("edit.txt", "edit v3"));
    await step("delete_file", { path: "gone.txt" }, () => Deno.remove(join(ws.root, "gone.txt")));
    await step("create_dir", { path: "dir" }, () => Deno.mkdir(join(ws.root, "dir")));
    await step(
      "move_file",
      { source: "keep.txt", destination: "dir/kept.txt" },
      () => Deno.rename(join(ws.root, "keep.txt"), join(ws.root, "dir/kept.txt")),
    );
    assertEquals(ws.snapshots.transaction(txn.id).snapshots.length, 5);
    const before = ws.snapshots.list().length;
    const result = await ws.snapshots.rollbackTransaction(txn.id);
    assertEquals(result.problems, []);
    assertEquals(result.transaction.status, "rolled_back");
    assert(result.transaction.finishedAt !== null);
    assertEquals(result.snapshot?.actionType, "rollback_transaction");
    assertEquals(ws.snapshots.list().length, before + 1, "one snapshot for the whole rollback");
    assertEquals(await ws.read("edit.txt"), "edit v1");
    assertEquals(await ws.read("gone.txt"), "gone v1");
    assertEquals(await ws.read("keep.txt"), "keep v1");
    assertEquals(await ws.exists("dir"), false);
    await assertRejects(
      () => ws.snapshots.rollbackTransaction(txn.id),
      TransactionStateError,
      "rolled back",
    );
    await assertRejects(
      () =>
        ws.snapshots.snapshot({ type: "write_file", payload: { path: "x" } }, {
          transactionId: txn.id,
        }),
      TransactionStateError,
    );
    // And the whole rollback is undone by rolling back its one snapshot.
    await ws.snapshots.rollback(result.snapshot!.id);
    assertEquals(await ws.read("edit.txt"), "edit v3");
    assertEquals(await ws.read("dir/kept.txt"), "keep v1");
    assertEquals(await ws.exists("gone.txt"), false);
  });
});

Deno.test("commit() closes a transaction; committing twice is refused", async () => {
  await withWorkspace(async (ws) => {
    const txn = ws.snapshots.beginTransaction();
    assertEquals(txn.status, "active");
    assertEquals(ws.snapshots.commit(txn.id).status, "committed");
    assertThrows(() => ws.snapshots.commit(txn.id), TransactionStateError, "committed");
    await assertRejects(() => ws.snapshots.rollbackTransaction(txn.id), TransactionStateError);
    assertEquals(ws.snapshots.transactions().map((t) => t.id), [txn.id]);
  });
});

Deno.test("rollback() of a snapshot whose content is missing fails before changing anything", async () => {
  await withWorkspace(async (ws) => {
    await ws.write("a.txt", "precious");
    const snap = await ws.snapshots.snapshot({ type: "write_file", payload: { path: "a.txt" } });
    await ws.write("a.txt", "now");
    const hash = snap!.files[0]!.hash;
    await Deno.remove(join(ws.casDir, "objects", hash.slice(0, 2), hash));
    await assertRejects(() => ws.snapshots.rollback(snap!.id), SnapshotContentError, hash);
    assertEquals(await ws.read("a.txt"), "now");
    assertEquals(ws.snapshots.list().length, 1, "no rollback snapshot was taken");
  });
});

Deno.test("diff() reports modified files with before and after hashes and sizes", async () => {
  await withWorkspace(async (ws) => {
    await ws.write("a.txt", "12345");
    const snap = await ws.snapshots.snapshot({ type: "write_file", payload: { path: "a.txt" } });
    assertEquals((await ws.snapshots.diff(snap!.id)).changes, []);
    await ws.write("a.txt", "1234567");
    const [change] = (await ws.snapshots.diff(snap!.id)).changes;
    assertEquals(change?.change, "modified");
    assertEquals(change?.beforeHash, snap!.files[0]!.hash);
    assertEquals(change?.beforeSize, 5);
    assertEquals(change?.afterSize, 7);
    assertEquals(change?.afterHash?.length, 64);
    await Deno.remove(join(ws.root, "a.txt"));
    const [deleted] = (await ws.snapshots.diff(snap!.id)).changes;
    assertEquals([deleted?.change, deleted?.afterHash, deleted?.afterSize], [
      "deleted",
      null,
      null,
    ]);
  });
});

Deno.test("snapshots share content in the CAS: one object for the same bytes", async () => {
  await withWorkspace(async (ws) => {
    await ws.write("x/same.txt", "same bytes");
    await ws.write("y/same.txt", "same bytes");
    const a = await ws.snapshots.snapshot({ type: "delete_file", payload: { path: "x/same.txt" } });
    const b = await ws.snapshots.snapshot({ type: "delete_file", payload: { path: "y/same.txt" } });
    assertEquals(a!.files[0]!.hash, b!.files[0]!.hash);
    assertEquals(ws.snapshots.referencedHashes().size, 1);
    assertEquals((await ws.cas.stats()).objects, 1);
  });
});

function shortestUniquePrefix(id: string, ids: string[]): string {
  for (let length = 4; length <= id.length; length++) {
    const prefix = id.slice(0, length);
    if (ids.filter((other) => other.startsWith(prefix)).length === 1) return prefix;
  }
  return id;
}
