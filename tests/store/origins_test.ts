/**
 * Every writer records the origin that tells what happened (lib/store ORIGINS): edits seen
 * on disk, REST writes, restores, rollbacks and accepted write-backs, each through the
 * real component on a real workspace, store and CAS (the commands as child processes).
 */
import assert from "node:assert/strict";
import { sha256Hex } from "../../lib/cas/mod.ts";
import { createApp, filesRoutes } from "../../lib/http/mod.ts";
import { MasterState, sandboxIdProblem } from "../../lib/replication/mod.ts";
import { WriteBackApplier } from "../../lib/replication/writeback_applier.ts";
import { DEFAULT_SNAPSHOT_CONFIG, openWorkspaceSnapshots } from "../../lib/snapshot/mod.ts";
import { ORIGINS, RESERVED_ORIGINS } from "../../lib/store/mod.ts";
import { Workspace } from "../../lib/workspace/mod.ts";
import { runChronicle, spawnChronicle } from "../_helpers/processes.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import { put, putAtomic, withTempDir } from "../_helpers/temp_dir.ts";

/** One writer: it changes `notes.md` (v1, then v2 on disk, both recorded locally first). */
interface Case {
  description: string;
  /** Makes the change; the workspace is open (closed and reopened around `command`). */
  write: (workspace: Workspace, root: string) => Promise<void>;
  expected: string;
}

const api = (workspace: Workspace) =>
  createApp({ token: undefined, trustedCaller: true, routes: [filesRoutes(workspace)] });

async function cli(workspace: Workspace, root: string, args: string[]): Promise<void> {
  await workspace.close(); // as a command runs beside (or without) a running Chronicle
  const result = await runChronicle([...args, "-C", root]);
  assert.equal(result.code, 0, result.stderr);
}

const snapshotsOf = (workspace: Workspace) =>
  openWorkspaceSnapshots(workspace, { config: DEFAULT_SNAPSHOT_CONFIG, offTheRecord: false });

/** Snapshots `notes.md`, then overwrites it on disk and records that; the snapshot's ID. */
async function snapshotThenOverwrite(
  workspace: Workspace,
  root: string,
  snapshots = snapshotsOf(workspace),
): Promise<string> {
  const snap = await snapshots.snapshot({ type: "write_file", payload: { path: "notes.md" } });
  await put(root, "notes.md", "oops");
  await workspace.scan();
  return snap!.id;
}

const CASES: Case[] = [
  {
    description: "an edit seen on disk by the scan is local",
    write: async (workspace, root) => {
      await put(root, "notes.md", "v3 by hand");
      await workspace.scan();
    },
    expected: ORIGINS.local,
  },
  {
    description: "PUT /files/{path} is api",
    write: async (workspace) => {
      const response = await api(workspace).request("/files/notes.md", {
        method: "PUT",
        body: "v3 over REST",
      });
      assert.equal(response.status, 201, await response.text());
    },
    expected: ORIGINS.api,
  },
  {
    description: "DELETE /files/{path} is api",
    write: async (workspace) => {
      const response = await api(workspace).request("/files/notes.md", { method: "DELETE" });
      assert.equal(response.status, 200, await response.text());
    },
    expected: ORIGINS.api,
  },
  {
    description: "chronicle restore PATH --at N is restore",
    write: (workspace, root) => cli(workspace, root, ["restore", "notes.md", "--at", "1"]),
    expected: ORIGINS.restore,
  },
  {
    description: "chronicle restore --to SEQ (point in time) is restore",
    write: (workspace, root) => cli(workspace, root, ["restore", "--to", "1", "--yes"]),
    expected: ORIGINS.restore,
  },
  {
    description: "a snapshot rollback is rollback",
    write: async (workspace, root) => {
      const snapshots = snapshotsOf(workspace);
      await snapshots.rollback(await snapshotThenOverwrite(workspace, root, snapshots));
    },
    expected: ORIGINS.rollback,
  },
  {
    description: "chronicle rollback ID is rollback",
    write: async (workspace, root) => {
      const id = await snapshotThenOverwrite(workspace, root);
      await cli(workspace, root, ["rollback", id.slice(0, 8)]);
    },
    expected: ORIGINS.rollback,
  },
  {
    description: "a transaction rollback is rollback",
    write: async (workspace, root) => {
      const snapshots = snapshotsOf(workspace);
      const txn = snapshots.beginTransaction();
      await snapshots.snapshot({ type: "delete_file", payload: { path: "notes.md" } }, {
        transactionId: txn.id,
      });
      await Deno.remove(`${root}/notes.md`);
      await workspace.scan();
      await snapshots.rollbackTransaction(txn.id);
    },
    expected: ORIGINS.rollback,
  },
  {
    description: "an accepted write-back is the sandbox's id",
    write: async (workspace) => {
      const applier = new WriteBackApplier({
        workspace,
        store: workspace.store,
        cas: workspace.cas,
        filter: workspace.filter,
        state: new MasterState(workspace.store.db),
      });
      const bytes = new TextEncoder().encode("v3 from the sandbox");
      const result = await applier.apply("sandbox-7", [{
        local_seq: 1n,
        filepath: "notes.md",
        operation: { type: "Write" },
        content_hash: sha256Hex(bytes),
        content_bytes: bytes,
        size: BigInt(bytes.length),
        permissions: 0o100644n,
        is_deletion: false,
        master_rowid_seen: BigInt(workspace.store.sequence()),
      }]);
      assert.deepEqual(result.rejected, []);
    },
    expected: "sandbox-7",
  },
];

Deno.test("each writer records its own origin", async (t) => {
  for (const { description, write, expected } of CASES) {
    await t.step(description, () =>
      withTempDir(async (root) => {
        await put(root, "notes.md", "v1");
        let workspace = await Workspace.open({ root });
        await workspace.scan();
        await put(root, "notes.md", "v2");
        await workspace.scan();
        try {
          await write(workspace, root);
        } finally {
          await workspace.close();
        }
        workspace = await Workspace.open({ root });
        try {
          const history = workspace.store.history("notes.md");
          assert.deepEqual(history.slice(0, 2).map((i) => i.origin), ["local", "local"]);
          assert.ok(history.length > 2, "the writer recorded a new iteration");
          assert.equal(history.at(-1)!.origin, expected, JSON.stringify(history));
        } finally {
          await workspace.close();
        }
      }));
  }
});

Deno.test("the origins are shown by history, log and GET /files/{path}/history", () =>
  withTempDir(async (root) => {
    await put(root, "notes.md", "v1");
    const workspace = await Workspace.open({ root });
    try {
      await workspace.scan();
      const response = await api(workspace).request("/files/notes.md", {
        method: "PUT",
        body: "v2",
      });
      assert.equal(response.status, 201);
      const history = await (await api(workspace).request("/files/notes.md/history")).json();
      assert.deepEqual(history.map((entry: { origin: string }) => entry.origin), ["local", "api"]);
      const changes = await (await api(workspace).request("/changes")).json();
      assert.deepEqual(changes.changes.map((c: { origin: string }) => c.origin), ["local", "api"]);
    } finally {
      await workspace.close();
    }
    const log = await runChronicle(["log", "--json", "-C", root]);
    assert.equal(log.code, 0, log.stderr);
    assert.deepEqual(JSON.parse(log.stdout).map((i: { origin: string }) => i.origin), [
      "local",
      "api",
    ]);
    const human = await runChronicle(["history", "notes.md", "-C", root]);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /#2 .* api /);
  }));

Deno.test("sandboxIdProblem() refuses every origin Chronicle gives itself", async (t) => {
  for (const origin of RESERVED_ORIGINS) {
    await t.step(origin, () => {
      assert.match(sandboxIdProblem(origin) ?? "", /reserved/);
    });
  }
  assert.equal(sandboxIdProblem("sandbox-7"), null);
});

Deno.test("beside a running Chronicle, restore and rollback commands are done by it, with their origins", () =>
  withTempDir(async (root) => {
    await put(root, "notes.md", "v1");
    const chronicle = spawnChronicle([root]);
    try {
      await waitFor("Chronicle running", async () => {
        const status = await runChronicle(["status", "--json", "-C", root]);
        return status.code === 0 && JSON.parse(status.stdout).running === true;
      }, { timeoutMs: 30_000 });
      const latestOrigin = async () => {
        const history = await runChronicle(["history", "notes.md", "--json", "-C", root]);
        return JSON.parse(history.stdout).at(-1) as { iteration: number; origin: string };
      };
      // In one step: the empty file of a truncate, captured alone, would be iteration 2.
      await putAtomic(root, "notes.md", "v2");
      await waitFor("v2 recorded", async () => (await latestOrigin()).iteration === 2);
      const snap = await runChronicle([
        "snapshot",
        "write_file",
        "--path",
        "notes.md",
        "--json",
        "-C",
        root,
      ]);
      assert.equal(snap.code, 0, snap.stderr);
      const steps: Array<{ args: string[]; expected: string; content: string }> = [
        { args: ["restore", "notes.md", "--at", "1"], expected: "restore", content: "v1" },
        { args: ["rollback", JSON.parse(snap.stdout).id], expected: "rollback", content: "v2" },
        { args: ["restore", "--to", "1", "--yes"], expected: "restore", content: "v1" },
      ];
      for (const { args, expected, content } of steps) {
        const before = (await latestOrigin()).iteration;
        const run = await runChronicle([...args, "-C", root], { env: { CHRONICLE_TXN: "" } });
        assert.equal(run.code, 0, run.stdout + run.stderr);
        const after = await latestOrigin();
        assert.deepEqual([after.iteration, after.origin], [before + 1, expected], args.join(" "));
        assert.equal(await Deno.readTextFile(`${root}/notes.md`), content);
      }
    } finally {
      assert.equal(await chronicle.stop(), 0, chronicle.output());
    }
  }));
