/**
 * A side's own write landing between the disk check that lets a change through and the
 * write it guards, injected through the workspace executor's hook (not by timing): the
 * master's write-back applier and the replica's apply record it and weigh the change
 * again; neither replaces it unseen (what the racing soak found as a lost write).
 */
import assert from "node:assert/strict";
import { sha256Hex } from "../../lib/cas/mod.ts";
import {
  MasterConflicts,
  MasterState,
  startMaster,
  startReplica,
} from "../../lib/replication/mod.ts";
import { WriteBackApplier } from "../../lib/replication/writeback_applier.ts";
import type { WriteBackEntry, WriteOperation } from "../../lib/wire/mod.ts";
import { type DiskHooks, Workspace } from "../../lib/workspace/mod.ts";
import { put, readText, withTempDir } from "../_helpers/temp_dir.ts";
import { sha256OfText } from "../_helpers/text_hash.ts";
import { waitFor } from "../_helpers/wait_for.ts";

/**
 * A hook writing `content` in place to `root/edited` once, when `armed()`, just before
 * the executor changes `changed` (a rename's hook names its source).
 */
function writeOnceBefore(
  root: string,
  changed: string,
  edited: string,
  content: string,
  armed: () => boolean,
): NonNullable<DiskHooks["beforeCheck"]> {
  let done = false;
  return async (path, operation) => {
    if (done || path !== changed || operation === "mkdir" || !armed()) return;
    done = true;
    await Deno.writeTextFile(`${root}/${edited}`, content); // in place: truncate, then write
  };
}

function entry(path: string, operation: WriteOperation, content: string | null, seen: number) {
  const bytes = content === null ? null : new TextEncoder().encode(content);
  return {
    local_seq: 1n,
    filepath: path,
    operation,
    content_hash: bytes === null ? null : sha256Hex(bytes),
    content_bytes: bytes,
    size: BigInt(bytes?.length ?? 0),
    permissions: 0o100644n,
    is_deletion: operation.type === "Delete",
    master_rowid_seen: BigInt(seen),
  } satisfies WriteBackEntry;
}

Deno.test("the write-back applier records a master write landing after its check, and rejects the entry as a conflict", async (t) => {
  const cases = [
    {
      description: "a write-back write",
      input: {
        entry: entry("agent.txt", { type: "Write" }, "the sandbox's", 0),
        changed: "agent.txt",
      },
    },
    {
      description: "a write-back deletion",
      input: { entry: entry("agent.txt", { type: "Delete" }, null, 0), changed: "agent.txt" },
    },
    {
      description: "a write-back rename over it",
      input: {
        entry: entry("other.txt", { type: "Rename", new_path: "agent.txt" }, null, 0),
        changed: "other.txt",
      },
    },
  ];
  for (const { description, input } of cases) {
    await t.step(description, () =>
      withTempDir(async (root) => {
        await put(root, "agent.txt", "the agent's");
        await put(root, "other.txt", "another file");
        const edit = "the agent's edit, after the check";
        let armed = false;
        const workspace = await Workspace.open({
          root,
          hooks: {
            beforeCheck: writeOnceBefore(root, input.changed, "agent.txt", edit, () => armed),
          },
        });
        try {
          await workspace.scan();
          const applier = new WriteBackApplier({
            workspace,
            store: workspace.store,
            cas: workspace.cas,
            filter: workspace.filter,
            state: new MasterState(workspace.store.db),
          });
          armed = true;
          // The sandbox saw the agent's first version: without the edit, accepted.
          const sent = { ...input.entry, master_rowid_seen: BigInt(workspace.store.sequence()) };
          const result = await applier.apply("sandbox-1", [sent]);
          assert.deepEqual(result.accepted, []);
          assert.equal(result.rejected.length, 1);
          assert.match(result.rejected[0]![1], /^conflict/);
          assert.equal(await readText(`${root}/agent.txt`), edit, "the edit is left on disk");
          const history = workspace.store.history("agent.txt").map((it) => it.hash);
          assert.deepEqual(history, [sha256OfText("the agent's"), sha256OfText(edit)]);
          if (input.entry.content_hash) {
            const kept = new MasterConflicts(workspace.store.db).list().map((c) => c.keptHash);
            assert.deepEqual(kept, [input.entry.content_hash], "the sandbox's write kept");
          }
          assert.equal(await readText(`${root}/other.txt`), "another file", "nothing moved");
        } finally {
          await workspace.close();
        }
      }));
  }
});

Deno.test("the replica's apply records a local write landing after its check, and writes it back as a conflict", () =>
  withTempDir(async (root) => {
    await put(root, "m/shared.txt", "the master's v1");
    await Deno.mkdir(`${root}/r`);
    const socket = `${root}/m.sock`;
    const masterSide = await Workspace.open({ root: `${root}/m` });
    await masterSide.scan();
    const master = await startMaster({ workspace: masterSide, socketPath: socket });
    const edit = "the sandbox's edit, after the check";
    let armed = false;
    // Never scanned nor watched: only the apply would record the edit.
    const replicaSide = await Workspace.open({
      root: `${root}/r`,
      hooks: {
        beforeCheck: writeOnceBefore(`${root}/r`, "shared.txt", "shared.txt", edit, () => armed),
      },
    });
    const replica = await startReplica({ workspace: replicaSide, connect: socket });
    try {
      await waitFor("v1 on the replica", () => replicaSide.store.latest("shared.txt"));
      armed = true;
      await masterSide.writeBytes("shared.txt", new TextEncoder().encode("the master's v2"));
      // The edit is recorded, written back, and kept by the sandbox as a conflict (the
      // master moved on from v1); both sides end with the master's v2.
      const conflict = await waitFor(
        "the sandbox's edit kept in a conflict",
        () => replica.status().conflicts.find((c) => c.path === "shared.txt"),
      );
      assert.equal(conflict.keptHash, sha256OfText(edit));
      assert.ok(
        replicaSide.store.history("shared.txt").some((it) => it.hash === sha256OfText(edit)),
        "the edit is in the replica's history",
      );
      await waitFor(
        "the master's v2 on the replica",
        async () => await readText(`${root}/r/shared.txt`) === "the master's v2",
      );
    } finally {
      await replica.close();
      await master.close();
      await replicaSide.close();
      await masterSide.close();
    }
  }));
