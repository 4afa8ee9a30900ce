import { join } from "node:path";
import { Workspace } from "../../lib/workspace/mod.ts";
import { SnapshotContentError, Snapshots } from "../../lib/snapshot/mod.ts";
import { assert, assertEquals, assertRejects, assertThrows } from "./_assert.ts";
import { withWorkspace } from "./_helpers.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

Deno.test("restoreTo() brings the workspace back to a sequence through the running workspace, undoably", async () => {
  const temp = await Deno.realPath(await Deno.makeTempDir({ prefix: "chronicle-restore-" }));
  const workspace = await Workspace.open({ root: temp });
  try {
    await workspace.writeBytes("a.txt", bytes("a1"));
    await workspace.writeBytes("dir/b.txt", bytes("b1"), { mode: 0o100600 });
    const moment = workspace.store.sequence();
    await workspace.writeBytes("a.txt", bytes("a2"));
    await workspace.writeBytes("c.txt", bytes("c1"));
    await workspace.remove("dir/b.txt");
    const snapshots = Snapshots.open({
      root: temp,
      store: workspace.store,
      cas: workspace.cas,
      writer: workspace,
    });
    const plan = snapshots.restorePlan({ sequence: moment });
    assertEquals(plan.changes.map((c) => `${c.path} ${c.action}`), [
      "a.txt write",
      "c.txt remove",
      "dir/b.txt write",
    ]);
    const iterationsBefore = workspace.store.stats().iterations;
    const result = await snapshots.restoreTo(plan);
    assertEquals(result.problems, []);
    assertEquals(await Deno.readTextFile(join(temp, "a.txt")), "a1");
    assertEquals(await Deno.readTextFile(join(temp, "dir/b.txt")), "b1");
    assertEquals(((await Deno.stat(join(temp, "dir/b.txt"))).mode ?? 0) & 0o777, 0o600);
    await assertRejects(() => Deno.stat(join(temp, "c.txt")), Deno.errors.NotFound);
    assertEquals(
      workspace.store.stats().iterations,
      iterationsBefore + 3,
      "each change recorded once",
    );
    assertEquals(workspace.store.latest("a.txt")?.iteration, 3, "as a new iteration");
    assertEquals(
      snapshots.restorePlan({ sequence: moment }).changes,
      [],
      "nothing left to restore",
    );
    assert(result.snapshot);
    assertEquals(result.snapshot.actionType, "restore");
    await snapshots.rollback(result.snapshot.id);
    assertEquals(await Deno.readTextFile(join(temp, "a.txt")), "a2");
    assertEquals(await Deno.readTextFile(join(temp, "c.txt")), "c1");
    await assertRejects(() => Deno.stat(join(temp, "dir/b.txt")), Deno.errors.NotFound);
  } finally {
    await workspace.close();
    await Deno.remove(temp, { recursive: true });
  }
});

Deno.test("restorePlan() takes a time, limits to paths, and refuses sequences beyond the store", async () => {
  await withWorkspace(async (ws) => {
    const record = (path: string, text: string, timestamp: number) =>
      ws.cas.putBytes(bytes(text)).then(({ hash, size }) =>
        ws.store.record([{ path, hash, size, mode: 0o100644, deleted: false, timestamp }])
      );
    await record("x/a.txt", "1", 1000);
    await record("y/b.txt", "1", 1000);
    await record("x/a.txt", "2", 2000);
    await record("y/b.txt", "2", 2000);
    const byTime = ws.snapshots.restorePlan({ timestamp: 1500 });
    assertEquals(byTime.sequence, 2);
    assertEquals(byTime.changes.map((c) => c.path), ["x/a.txt", "y/b.txt"]);
    assertEquals(ws.snapshots.restorePlan({ timestamp: 1500 }, ["x"]).changes.map((c) => c.path), [
      "x/a.txt",
    ]);
    assertEquals(ws.snapshots.restorePlan({ timestamp: 10 }).sequence, 0);
    assertEquals(ws.snapshots.restorePlan({ timestamp: 10 }).changes.map((c) => c.action), [
      "remove",
      "remove",
    ]);
    assertThrows(() => ws.snapshots.restorePlan({ sequence: 99 }), RangeError, "newest is 4");
    assertThrows(() => ws.snapshots.restorePlan({ sequence: 1 }, ["../x"]), TypeError, "outside");
  });
});

Deno.test("restoreTo() without a running workspace writes atomically and records iterations in the store", async () => {
  await withWorkspace(async (ws) => {
    await ws.write("f.txt", "old");
    const old = await ws.cas.putFile(join(ws.root, "f.txt"));
    ws.store.record([{ path: "f.txt", ...old, mode: 0o100644, deleted: false }]);
    const moment = ws.store.sequence();
    await ws.write("f.txt", "new");
    const fresh = await ws.cas.putFile(join(ws.root, "f.txt"));
    ws.store.record([{ path: "f.txt", ...fresh, mode: 0o100644, deleted: false }]);
    const result = await ws.snapshots.restoreTo(ws.snapshots.restorePlan({ sequence: moment }));
    assertEquals(result.applied, ["f.txt"]);
    assertEquals(await ws.read("f.txt"), "old");
    assertEquals(ws.store.latest("f.txt")?.hash, old.hash);
    assertEquals(ws.store.latest("f.txt")?.iteration, 3);
  });
});

Deno.test("restoreTo() refuses a plan whose old content is missing, before changing anything", async () => {
  await withWorkspace(async (ws) => {
    const missing = "ee".repeat(32);
    ws.store.record([{ path: "f.txt", hash: missing, size: 1, mode: 0o100644, deleted: false }]);
    ws.store.record([{ path: "f.txt", hash: "", size: 0, mode: 0, deleted: true }]);
    const plan = ws.snapshots.restorePlan({ sequence: 1 });
    await assertRejects(() => ws.snapshots.restoreTo(plan), SnapshotContentError, missing);
    assertEquals(ws.snapshots.list(), []);
  });
});

Deno.test("rollback() through the running workspace restores ignored files directly and records the rest once", async () => {
  const temp = await Deno.realPath(await Deno.makeTempDir({ prefix: "chronicle-rollback-" }));
  const workspace = await Workspace.open({ root: temp, ignore: ["*.log"] });
  try {
    await workspace.writeBytes("d/a.txt", bytes("a"));
    await Deno.writeTextFile(join(temp, "d/x.log"), "log");
    const snapshots = Snapshots.open({
      root: temp,
      store: workspace.store,
      cas: workspace.cas,
      writer: workspace,
      ignores: (path) => workspace.filter.local.ignores(path),
    });
    const snap = await snapshots.snapshot({ type: "delete_dir", payload: { path: "d" } });
    await workspace.remove("d");
    const iterations = workspace.store.stats().iterations;
    const result = await snapshots.rollback(snap!.id);
    assertEquals(result.problems, []);
    assertEquals(await Deno.readTextFile(join(temp, "d/a.txt")), "a");
    assertEquals(await Deno.readTextFile(join(temp, "d/x.log")), "log");
    assertEquals(workspace.store.stats().iterations, iterations + 2, "d/a.txt and its folder d");
    assertEquals(workspace.store.latest("d/x.log"), undefined);
  } finally {
    await workspace.close();
    await Deno.remove(temp, { recursive: true });
  }
});
