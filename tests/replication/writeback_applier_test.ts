/**
 * The master's write-back applier against a real workspace, store and CAS: runs of
 * writes and deletions applied together, in order, each entry answered once.
 */
import assert from "node:assert/strict";
import { metrics } from "../../lib/metrics/mod.ts";
import { MasterState } from "../../lib/replication/mod.ts";
import type { WriteBackApplier } from "../../lib/replication/writeback_applier.ts";
import type { WriteBackEntry } from "../../lib/wire/mod.ts";
import { Workspace } from "../../lib/workspace/mod.ts";
import { put, withTempDir } from "../_helpers/temp_dir.ts";
import { applierOf, entry } from "./_writeback_applier.ts";

/** Opens and scans the workspace at `root`, as a master starting on it. */
async function openScanned(root: string): Promise<Workspace> {
  const workspace = await Workspace.open({ root });
  await workspace.scan();
  return workspace;
}

async function withApplier(
  work: (applier: WriteBackApplier, workspace: Workspace, root: string) => Promise<void>,
): Promise<void> {
  await withTempDir(async (root) => {
    await put(root, "gone.txt", "to be deleted");
    await put(root, "agent.txt", "the agent's");
    const workspace = await openScanned(root);
    try {
      await work(applierOf(workspace), workspace, root);
    } finally {
      await workspace.close();
    }
  });
}

Deno.test("WriteBackApplier applies a batch in order: runs of unrelated paths, repeats and renames between", () =>
  withApplier(async (applier, workspace, root) => {
    const seen = workspace.store.sequence();
    const batch = [
      entry("a.txt", { type: "Write" }, "a one", seen),
      entry("dir/b.txt", { type: "Write" }, "b", seen),
      entry("gone.txt", { type: "Delete" }, null, seen),
      entry("a.txt", { type: "Write" }, "a two", seen), // same path again: a later run
      entry("dir/b.txt", { type: "Rename", new_path: "dir/c.txt" }, null, seen),
      entry("dir/c.txt", { type: "Delete" }, null, seen),
      entry("dir", { type: "Delete" }, null, seen), // the folder, once empty (PROTOCOL.md §8)
      entry("dir", { type: "Write" }, "dir is a file now", seen),
    ];
    const result = await applier.apply("sandbox-1", batch);
    assert.deepEqual(result.rejected, []);
    assert.equal(result.disconnect, null);
    assert.deepEqual(result.accepted.map(([local]) => local), batch.map((e) => e.local_seq));
    const sequences = result.accepted.map(([, master]) => Number(master));
    // The first three form one run (one transaction, any order among them); the rest
    // each touch a path related to an earlier one, so each comes after the one before.
    const later = [Math.max(...sequences.slice(0, 3)), ...sequences.slice(3)];
    assert.deepEqual(later, [...later].sort((a, b) => a - b), `in the batch's order: ${sequences}`);
    assert.equal(new Set(later).size, later.length);
    assert.equal(await Deno.readTextFile(`${root}/a.txt`), "a two");
    assert.equal(await Deno.readTextFile(`${root}/dir`), "dir is a file now");
    await assert.rejects(Deno.lstat(`${root}/gone.txt`), Deno.errors.NotFound);
    assert.deepEqual(
      workspace.store.list().map((iteration) => `${iteration.path} ${iteration.origin}`),
      ["a.txt sandbox-1", "agent.txt local", "dir sandbox-1"],
    );
    const again = await applier.apply("sandbox-1", batch);
    assert.deepEqual(again, result, "each entry is answered once, then from the record");
    assert.equal(workspace.store.sequence(), Math.max(...sequences), "nothing applied twice");
  }));

Deno.test("WriteBackApplier rejects conflicts, bad content and bad paths inside a run; the rest lands", () =>
  withApplier(async (applier, workspace, root) => {
    const stale = 0; // the sandbox never saw the agent's iterations
    const corrupt = {
      ...entry("corrupt.txt", { type: "Write" }, "real"),
      content_hash: "0".repeat(64),
    };
    const batch = [
      entry("fine-1.txt", { type: "Write" }, "one", workspace.store.sequence()),
      entry("agent.txt", { type: "Write" }, "the sandbox's", stale),
      corrupt,
      entry(".git/config", { type: "Write" }, "filtered", workspace.store.sequence()),
      entry("fine-2.txt", { type: "Write" }, "two", workspace.store.sequence()),
    ];
    const counted = () => ({
      accepted: metrics.writebacks.get({ result: "accepted" }),
      rejected: metrics.writebacks.get({ result: "rejected" }),
      conflicts: metrics.conflicts.get(),
    });
    const before = counted();
    const result = await applier.apply("sandbox-2", batch);
    const after = counted();
    assert.deepEqual(
      [after.accepted - before.accepted, after.rejected - before.rejected],
      [2, 3],
      "every decided entry counted in /metrics",
    );
    assert.equal(after.conflicts - before.conflicts, 1, "the conflict counted");
    await applier.apply("sandbox-2", batch);
    assert.deepEqual(counted(), after, "answers from the record are not counted again");
    assert.deepEqual(result.accepted.map(([local]) => local), [
      batch[0]!.local_seq,
      batch[4]!.local_seq,
    ]);
    const reasons = new Map(
      result.rejected.map(([local, reason]) => [local, reason.split(":")[0]]),
    );
    assert.equal(reasons.get(batch[1]!.local_seq), "conflict");
    assert.equal(reasons.size, 3);
    assert.equal(await Deno.readTextFile(`${root}/agent.txt`), "the agent's");
    assert.equal(await Deno.readTextFile(`${root}/fine-2.txt`), "two");
    await assert.rejects(Deno.lstat(`${root}/corrupt.txt`), Deno.errors.NotFound);
  }));

Deno.test("WriteBackApplier disconnects a sender whose path leaves the workspace, after what came before", () =>
  withApplier(async (applier, workspace, root) => {
    const seen = workspace.store.sequence();
    const batch = [
      entry("before.txt", { type: "Write" }, "kept", seen),
      entry("../outside.txt", { type: "Write" }, "hostile", seen),
      entry("after.txt", { type: "Write" }, "never looked at", seen),
    ];
    const result = await applier.apply("sandbox-3", batch);
    assert.match(result.disconnect ?? "", /leaves the workspace/);
    assert.deepEqual(result.accepted.map(([local]) => local), [batch[0]!.local_seq]);
    assert.equal(await Deno.readTextFile(`${root}/before.txt`), "kept");
    await assert.rejects(Deno.lstat(`${root}/after.txt`), Deno.errors.NotFound);
  }));

const EXECUTABLE = 0o100755;

/** A rename of agent.txt to moved.txt that also makes it executable. */
function renameToExecutable(seen: number): WriteBackEntry {
  return {
    ...entry("agent.txt", { type: "Rename", new_path: "moved.txt" }, null, seen),
    permissions: BigInt(EXECUTABLE),
  };
}

Deno.test("WriteBackApplier notes what a rename or a chmod leaves on disk before recording it", () =>
  withApplier(async (applier, workspace) => {
    const state = new MasterState(workspace.store.db);
    const agent = workspace.store.latest("agent.txt")!;
    const chmod = {
      ...entry("gone.txt", { type: "Chmod" }, null, workspace.store.sequence()),
      permissions: 0o100600n,
    };
    const rename = renameToExecutable(workspace.store.sequence());
    const notedWhenRecorded = new Map<string, unknown>();
    const stop = workspace.store.onRecorded((recorded) => {
      for (const { path } of recorded) {
        notedWhenRecorded.set(path, [
          ...state.applying("sandbox-4", rename.local_seq),
          ...state.applying("sandbox-4", chmod.local_seq),
        ]);
      }
    });
    const result = await applier.apply("sandbox-4", [rename, chmod]);
    stop();
    assert.deepEqual(result.rejected, []);
    const moved = { path: "moved.txt", hash: agent.hash, mode: agent.mode, deleted: false };
    const renamed = [
      { path: "agent.txt", hash: "", mode: 0, deleted: true },
      moved,
      { ...moved, mode: EXECUTABLE },
    ];
    assert.deepEqual(notedWhenRecorded.get("moved.txt"), renamed, "noted before the move");
    const gone = workspace.store.latest("gone.txt")!;
    assert.deepEqual(notedWhenRecorded.get("gone.txt"), [{
      path: "gone.txt",
      hash: gone.hash,
      mode: 0o100600,
      deleted: false,
    }]);
    assert.deepEqual(state.applying("sandbox-4", rename.local_seq), [], "forgotten once decided");
  }));

/**
 * Leaves `root` as a master killed in the middle of `renameToExecutable` leaves it: the
 * move made and noted, not recorded, the mode not yet set. `meanwhile` runs before the
 * master starts again.
 */
async function killedMidRename(
  root: string,
  meanwhile: () => Promise<void>,
): Promise<WriteBackEntry> {
  const workspace = await openScanned(root);
  const agent = workspace.store.latest("agent.txt")!;
  const rename = renameToExecutable(workspace.store.sequence());
  const moved = { path: "moved.txt", hash: agent.hash, mode: agent.mode, deleted: false };
  new MasterState(workspace.store.db).noteApplying(
    "sandbox-5",
    [
      { path: "agent.txt", hash: "", mode: 0, deleted: true },
      moved,
      { ...moved, mode: EXECUTABLE },
    ].map((noted) => ({ localSeq: rename.local_seq, ...noted })),
  );
  await Deno.rename(`${root}/agent.txt`, `${root}/moved.txt`);
  await workspace.close();
  await meanwhile();
  return rename;
}

Deno.test("WriteBackApplier: a rename a killed master made but never recorded is accepted when sent again, not a conflict", () =>
  withTempDir(async (root) => {
    await put(root, "agent.txt", "the agent's");
    const rename = await killedMidRename(root, async () => {});
    const workspace = await openScanned(root); // records the move as the agent's
    try {
      assert.equal(workspace.store.latest("moved.txt")?.origin, "local");
      const result = await applierOf(workspace).apply("sandbox-5", [rename]);
      assert.deepEqual(result.rejected, []);
      assert.equal(result.accepted[0]?.[1], BigInt(workspace.store.sequence()));
      assert.equal((await Deno.lstat(`${root}/moved.txt`)).mode! & 0o7777, EXECUTABLE & 0o7777);
      assert.equal(await Deno.readTextFile(`${root}/moved.txt`), "the agent's");
      await assert.rejects(Deno.lstat(`${root}/agent.txt`), Deno.errors.NotFound);
      assert.equal(workspace.store.latest("moved.txt")?.mode, EXECUTABLE);
    } finally {
      await workspace.close();
    }
  }));

Deno.test("WriteBackApplier: an agent's edit after a killed master's rename is still a conflict", () =>
  withTempDir(async (root) => {
    await put(root, "agent.txt", "the agent's");
    const rename = await killedMidRename(root, () => put(root, "moved.txt", "the agent's edit"));
    const workspace = await openScanned(root);
    try {
      const result = await applierOf(workspace).apply("sandbox-5", [rename]);
      assert.deepEqual(result.accepted, []);
      assert.match(result.rejected[0]?.[1] ?? "", /^conflict: "moved.txt" changed/);
      assert.equal(await Deno.readTextFile(`${root}/moved.txt`), "the agent's edit");
    } finally {
      await workspace.close();
    }
  }));

Deno.test("WriteBackApplier: a rename recorded by a master killed before it stored the answer is answered again, not made twice", () =>
  withApplier(async (applier, workspace, root) => {
    const rename = renameToExecutable(workspace.store.sequence());
    const first = await applier.apply("sandbox-6", [rename]);
    assert.deepEqual(first.rejected, []);
    const sequence = workspace.store.sequence();
    // The outcome lost with the master: stored in a transaction of its own, after the record.
    workspace.store.db.prepare("DELETE FROM master_writebacks WHERE local_seq = ?").run(
      rename.local_seq,
    );
    const again = await applierOf(workspace).apply("sandbox-6", [rename]);
    assert.deepEqual(again, first);
    assert.equal(workspace.store.sequence(), sequence, "nothing recorded twice");
    assert.equal(await Deno.readTextFile(`${root}/moved.txt`), "the agent's");
  }));

Deno.test("WriteBackApplier: a chmod a killed master made but never recorded is accepted when sent again", () =>
  withTempDir(async (root) => {
    await put(root, "run.sh", "echo hi");
    let workspace = await openScanned(root);
    const script = workspace.store.latest("run.sh")!;
    const chmod = {
      ...entry("run.sh", { type: "Chmod" }, null, workspace.store.sequence()),
      permissions: BigInt(EXECUTABLE),
    };
    new MasterState(workspace.store.db).noteApplying("sandbox-7", [
      {
        localSeq: chmod.local_seq,
        path: "run.sh",
        hash: script.hash,
        mode: EXECUTABLE,
        deleted: false,
      },
    ]);
    await Deno.chmod(`${root}/run.sh`, 0o755); // killed before recording it
    await workspace.close();
    workspace = await openScanned(root);
    try {
      assert.equal(workspace.store.latest("run.sh")?.origin, "local");
      const result = await applierOf(workspace).apply("sandbox-7", [chmod]);
      assert.deepEqual(result.rejected, []);
      assert.equal(result.accepted[0]?.[1], BigInt(workspace.store.latest("run.sh")!.sequence));
    } finally {
      await workspace.close();
    }
  }));
