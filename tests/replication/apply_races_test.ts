/**
 * A side's own write landing between the disk check that lets a change through and the
 * write it guards, injected through the workspace executor's hook (not by timing): the
 * master's write-back applier and the replica's apply record it and weigh the change
 * again; neither replaces it unseen (what the racing soak found as a lost write).
 */
import assert from "node:assert/strict";
import { MasterConflicts, startMaster, startReplica } from "../../lib/replication/mod.ts";
import { type DiskHooks, Workspace } from "../../lib/workspace/mod.ts";
import { put, readText, withTempDir } from "../_helpers/temp_dir.ts";
import { sha256OfText } from "../_helpers/text_hash.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import { withMasterAndReplica } from "./_in_process_pair.ts";
import { applierOf, entry } from "./_writeback_applier.ts";

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
          const applier = applierOf(workspace);
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

Deno.test("a folder's mode changed on the replica right after it applied the master's is the replica's, on top of the master's: accepted, no conflict", () =>
  withTempDir(async (root) => {
    await Deno.mkdir(`${root}/m/d`, { recursive: true, mode: 0o755 });
    await Deno.chmod(`${root}/m/d`, 0o755);
    await put(root, "m/d/a.txt", "inside");
    let armed = false;
    await withMasterAndReplica(root, {
      replicaHooks: (r) => ({
        afterChange: async (path) => {
          if (!armed || path !== "d") return;
          armed = false;
          await Deno.chmod(`${r}/d`, 0o700); // the sandbox's own chmod, right after the apply
        },
      }),
    }, async ({ masterSide, replicaSide, replica }) => {
      await waitFor("d/a.txt on the replica", () => replicaSide.store.latest("d/a.txt"));
      armed = true;
      await masterSide.chmod("d", 0o40750);
      const modeOf = (side: string) => (Deno.lstatSync(`${root}/${side}/d`).mode ?? 0) & 0o777;
      // Not the master's on the replica: recorded as local, written back, then the
      // master's answer decides, the same on both sides.
      await waitFor(
        "the replica's own chmod recorded as local",
        () => replicaSide.store.history("d").some((it) => it.origin === "local"),
      );
      await waitFor("both sides with one mode", () => modeOf("m") === modeOf("r"));
      // Made on top of the master's mode (set before it): accepted, no conflict.
      assert.deepEqual(replica.status().conflicts, [], "written back as having seen it");
      assert.equal(modeOf("m"), 0o700, "the sandbox's mode accepted");
      const history = replicaSide.store.history("d");
      const master = history.findIndex((it) => it.origin === "master" && it.mode === 0o40750);
      assert.ok(master > 0, "the master's mode recorded");
      assert.equal(history[master + 1]?.origin, "local", "then the sandbox's own");
    });
  }));

Deno.test("what the replica puts right where it removed a file for the master, before the apply's last look, is the replica's, on top of the removal", async (t) => {
  await localChangeOnTopOfRemoval(t, "afterChange", [
    { description: "a file", input: { made: "f.txt", file: "f.txt" } },
    // The folders_test flake: a file removed by the master, a folder put there at once.
    { description: "a folder holding a file", input: { made: "f.txt", file: "f.txt/in/a.txt" } },
  ]);
});

Deno.test("a file the replica writes right before it removes it for the master is kept in a conflict (it did not see the removal)", () =>
  withTempDir(async (root) => {
    await put(root, "m/f.txt", "the master's");
    const theirs = "the sandbox's edit, right before the removal";
    let armed = false;
    await withMasterAndReplica(root, {
      replicaHooks: (r) => ({
        beforeCheck: writeOnceBefore(r, "f.txt", "f.txt", theirs, () => armed),
      }),
    }, async ({ masterSide, replicaSide, replica }) => {
      await waitFor("f.txt on the replica", () => replicaSide.store.latest("f.txt"));
      armed = true;
      await masterSide.remove("f.txt");
      const conflict = await waitFor(
        "the sandbox's edit kept in a conflict",
        () => replica.status().conflicts.find((c) => c.path === "f.txt"),
      );
      assert.equal(conflict.keptHash, sha256OfText(theirs));
      const history = replicaSide.store.history("f.txt");
      const edit = history.findIndex((it) => it.hash === conflict.keptHash);
      assert.equal(history[edit]?.origin, "local", "the edit recorded as the sandbox's");
      assert.ok(!history.slice(0, edit).some((it) => it.deleted), "before any removal");
      await waitFor(
        "the master's removal on the replica",
        async () => await readText(`${root}/r/f.txt`) === undefined,
      );
    });
  }));

Deno.test("a write-back deletion the agent writes over right after it is accepted at the deletion's own sequence, the agent's file recorded after it", () =>
  withTempDir(async (root) => {
    await put(root, "f.txt", "the first");
    const agent = "the agent's, right after the removal";
    let armed = false;
    const workspace = await Workspace.open({
      root,
      hooks: {
        afterChange: async (path) => {
          if (!armed || path !== "f.txt") return;
          armed = false;
          await Deno.writeTextFile(`${root}/f.txt`, agent);
        },
      },
    });
    try {
      await workspace.scan();
      const applier = applierOf(workspace);
      armed = true;
      const removal = entry("f.txt", { type: "Delete" }, null, workspace.store.sequence());
      const result = await applier.apply("sandbox-1", [removal]);
      assert.deepEqual(result.rejected, []);
      const history = workspace.store.history("f.txt");
      const deletion = history.find((it) => it.deleted)!;
      assert.equal(deletion.origin, "sandbox-1", "the sandbox's removal recorded");
      // The agent's file comes after: the sandbox is sent it (an answer at its sequence
      // would make the sandbox skip it).
      assert.deepEqual(result.accepted, [[removal.local_seq, BigInt(deletion.sequence)]]);
      const last = history.at(-1)!;
      assert.deepEqual([last.origin, last.hash], ["local", sha256OfText(agent)]);
      assert.ok(last.sequence > deletion.sequence);
    } finally {
      await workspace.close();
    }
  }));

Deno.test("a write-back rename whose source the agent removed after the decision is a conflict (which the sandbox undoes), not a failure", () =>
  withTempDir(async (root) => {
    await put(root, "from.txt", "the content");
    let armed = false;
    const workspace = await Workspace.open({
      root,
      hooks: {
        beforeCheck: async (path, operation) => {
          if (!armed || path !== "from.txt" || operation !== "rename") return;
          armed = false;
          await Deno.remove(`${root}/from.txt`); // the agent's, right after the decision
        },
      },
    });
    try {
      await workspace.scan();
      const applier = applierOf(workspace);
      armed = true;
      const seen = workspace.store.sequence();
      const rename = entry("from.txt", { type: "Rename", new_path: "to.txt" }, null, seen);
      const result = await applier.apply("sandbox-1", [rename]);
      assert.equal(result.rejected.length, 1);
      // Only a conflict makes the sandbox take the master's version of both paths back.
      assert.match(result.rejected[0]![1], /^conflict/);
      assert.equal(workspace.store.latest("from.txt")?.deleted, true, "the removal recorded");
      assert.equal(await readText(`${root}/to.txt`), undefined);
    } finally {
      await workspace.close();
    }
  }));

Deno.test("a write-back folder deletion the agent fills after the decision is a conflict (which the sandbox undoes), not a failure", () =>
  withTempDir(async (root) => {
    await Deno.mkdir(`${root}/d`);
    let armed = false;
    const workspace = await Workspace.open({
      root,
      hooks: {
        beforeCheck: async (path, operation) => {
          if (!armed || path !== "d" || operation !== "remove") return;
          armed = false;
          await Deno.writeTextFile(`${root}/d/new.txt`, "the agent's"); // right after the decision
        },
      },
    });
    try {
      await workspace.scan();
      const applier = applierOf(workspace);
      armed = true;
      const result = await applier.apply("sandbox-1", [
        entry("d", { type: "Delete" }, null, workspace.store.sequence()),
      ]);
      assert.equal(result.rejected.length, 1);
      assert.match(result.rejected[0]![1], /^conflict/);
      assert.equal(await readText(`${root}/d/new.txt`), "the agent's");
    } finally {
      await workspace.close();
    }
  }));

Deno.test("what the replica puts where it removed a file for the master, after its last look and before the record, is the replica's, and kept", async (t) => {
  await localChangeOnTopOfRemoval(t, "beforeRecord", [
    { description: "a file", input: { made: "f.txt", file: "f.txt" } },
    { description: "a folder holding a file", input: { made: "f.txt", file: "f.txt/inner.txt" } },
  ]);
});

/**
 * The master removes `f.txt`; the replica's `hook`, once the removal reaches it for `made`,
 * puts the sandbox's own `file` there (at or inside `made`). Made on top of the removal
 * (which came first), it is written back with no conflict, and both sides end alike.
 */
async function localChangeOnTopOfRemoval(
  t: Deno.TestContext,
  hook: "afterChange" | "beforeRecord",
  cases: { description: string; input: { made: string; file: string } }[],
): Promise<void> {
  for (const { description, input } of cases) {
    await t.step(description, () =>
      withTempDir(async (root) => {
        await put(root, "m/f.txt", "the master's");
        const theirs = `the sandbox's, put at the ${hook} of the removal`;
        let armed = false;
        const putTheirs = async (r: string, paths: string[]) => {
          if (!armed || !paths.includes(input.made)) return;
          armed = false;
          await put(r, input.file, theirs);
        };
        await withMasterAndReplica(root, {
          replicaHooks: (r) =>
            hook === "afterChange"
              ? { afterChange: (path) => putTheirs(r, [path]) }
              : { beforeRecord: (paths) => putTheirs(r, paths) },
        }, async ({ masterSide, replicaSide, replica }) => {
          await waitFor("f.txt on the replica", () => replicaSide.store.latest("f.txt"));
          armed = true;
          await masterSide.remove("f.txt");
          const hash = sha256OfText(theirs);
          await waitFor(
            "the sandbox's file in the master's history or kept in a conflict",
            () =>
              masterSide.store.history(input.file).some((it) => it.hash === hash) ||
              replica.status().conflicts.some((c) => c.keptHash === hash),
          );
          assert.deepEqual(replica.status().conflicts, [], "written back as having seen it");
          assertOwnOnTopOfRemoval(replicaSide, input.made, input.file, hash);
          await waitFor(
            "both sides alike",
            async () =>
              await readText(`${root}/m/${input.file}`) ===
                await readText(`${root}/r/${input.file}`),
          );
        });
      }));
  }
}

/**
 * The replica's history: the master's removal of `made` recorded first, then what the
 * sandbox put there as its own (`file`, at or inside `made`, with `hash`).
 */
function assertOwnOnTopOfRemoval(
  replicaSide: Workspace,
  made: string,
  file: string,
  hash: string,
): void {
  const history = replicaSide.store.history(made);
  const removal = history.findIndex((it) => it.deleted && it.origin === "master");
  assert.ok(removal > 0, `the master's removal of "${made}" recorded`);
  assert.equal(history[removal + 1]?.origin, "local", "then the sandbox's own");
  const own = replicaSide.store.history(file).filter((it) => it.hash === hash);
  assert.ok(own.length > 0 && own.every((it) => it.origin === "local"), "never the master's");
}
