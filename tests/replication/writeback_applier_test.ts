/**
 * The master's write-back applier against a real workspace, store and CAS: runs of
 * writes and deletions applied together, in order, each entry answered once.
 */
import assert from "node:assert/strict";
import { sha256Hex } from "../../lib/cas/mod.ts";
import { metrics } from "../../lib/metrics/mod.ts";
import { MasterState } from "../../lib/replication/mod.ts";
import { WriteBackApplier } from "../../lib/replication/writeback_applier.ts";
import type { WriteBackEntry, WriteOperation } from "../../lib/wire/mod.ts";
import { Workspace } from "../../lib/workspace/mod.ts";
import { put, withTempDir } from "../_helpers/temp_dir.ts";

let nextSeq = 1n;

function entry(
  path: string,
  operation: WriteOperation,
  content: string | null = null,
  seen = 0,
): WriteBackEntry {
  const bytes = content === null ? null : new TextEncoder().encode(content);
  return {
    local_seq: nextSeq++,
    filepath: path,
    operation,
    content_hash: bytes === null ? null : sha256Hex(bytes),
    content_bytes: bytes,
    size: BigInt(bytes?.length ?? 0),
    permissions: 0o100644n,
    is_deletion: operation.type === "Delete",
    master_rowid_seen: BigInt(seen),
  };
}

async function withApplier(
  work: (applier: WriteBackApplier, workspace: Workspace, root: string) => Promise<void>,
): Promise<void> {
  await withTempDir(async (root) => {
    await put(root, "gone.txt", "to be deleted");
    await put(root, "agent.txt", "the agent's");
    const workspace = await Workspace.open({ root });
    try {
      await workspace.scan();
      const applier = new WriteBackApplier({
        workspace,
        store: workspace.store,
        cas: workspace.cas,
        filter: workspace.filter,
        state: new MasterState(workspace.store.db),
      });
      await work(applier, workspace, root);
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
      entry("dir", { type: "Delete" }, null, seen), // holds c.txt: after the rename
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
