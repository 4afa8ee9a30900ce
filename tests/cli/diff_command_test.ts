/**
 * `chronicle diff` as a child process on real workspaces: a path's iterations with
 * `--from`, a snapshot's changes with `--patch`, and how an argument is told to be one or
 * the other.
 */
import assert from "node:assert/strict";
import { DEFAULT_SNAPSHOT_CONFIG, openWorkspaceSnapshots } from "../../lib/snapshot/mod.ts";
import { Workspace } from "../../lib/workspace/mod.ts";
import { runChronicle } from "../_helpers/processes.ts";
import { put, withTempDir } from "../_helpers/temp_dir.ts";

/** A workspace with notes.md at v1, v2; a snapshot taken at v2; then v3 on disk (recorded). */
async function withHistory(work: (root: string, snapshotId: string) => Promise<void>) {
  await withTempDir(async (root) => {
    await put(root, "notes.md", "title\nv1\n");
    const workspace = await Workspace.open({ root });
    let id: string;
    try {
      await workspace.scan();
      await put(root, "notes.md", "title\nv2\n");
      await workspace.scan();
      const snapshots = openWorkspaceSnapshots(workspace, {
        config: DEFAULT_SNAPSHOT_CONFIG,
        offTheRecord: false,
      });
      const snap = await snapshots.snapshot({ type: "write_file", payload: { path: "notes.md" } });
      id = snap!.id;
      await put(root, "notes.md", "title\nv3\n");
      await workspace.scan();
    } finally {
      await workspace.close();
    }
    await work(root, id);
  });
}

const chronicle = (root: string, ...args: string[]) =>
  runChronicle(["diff", ...args], { env: { CHRONICLE_TXN: "" }, cwd: root });

Deno.test("chronicle diff PATH --from N prints the unified diff to the latest, or to --to", () =>
  withHistory(async (root) => {
    const latest = await chronicle(root, "notes.md", "--from", "1");
    assert.equal(latest.code, 0, latest.stderr);
    assert.equal(
      latest.stdout,
      "--- a/notes.md@1\n+++ b/notes.md@3\n@@ -1,2 +1,2 @@\n title\n-v1\n+v3\n",
    );
    const between = await chronicle(root, "notes.md", "--from=1", "--to=2", "-C", root);
    assert.equal(between.code, 0, between.stderr);
    assert.match(between.stdout, /^--- a\/notes\.md@1\n\+\+\+ b\/notes\.md@2\n/);
    const json = await chronicle(root, "notes.md", "--from", "2", "--json");
    assert.equal(json.code, 0, json.stderr);
    const body = JSON.parse(json.stdout);
    assert.deepEqual([body.from.iteration, body.to.iteration, body.added, body.removed], [
      2,
      3,
      1,
      1,
    ]);
  }));

Deno.test("chronicle diff PATH --from N says what is wrong", async (t) => {
  const cases = [
    {
      description: "an unknown iteration",
      args: ["notes.md", "--from", "7"],
      code: 1,
      stderr: /Unknown iteration 7 of "notes\.md"/,
    },
    {
      description: "an unknown path",
      args: ["nope.md", "--from", "1"],
      code: 1,
      stderr: /Unknown path "nope\.md"/,
    },
    {
      description: "a path out of the workspace",
      args: ["../x", "--from", "1"],
      code: 1,
      stderr: /error: /,
    },
    {
      description: "--from 0",
      args: ["notes.md", "--from", "0"],
      code: 2,
      stderr: /Invalid --from "0"/,
    },
    {
      description: "no path",
      args: ["--from", "1"],
      code: 2,
      stderr: /Usage: chronicle diff PATH --from N/,
    },
    {
      description: "--to without --from",
      args: ["notes.md", "--to", "2"],
      code: 2,
      stderr: /--to/,
    },
    {
      description: "a path without --from",
      args: ["notes.md"],
      code: 2,
      stderr: /"notes\.md" is a path, not a snapshot id: add --from N/,
    },
  ];
  await withHistory(async (root) => {
    for (const { description, args, code, stderr } of cases) {
      await t.step(description, async () => {
        const run = await chronicle(root, ...args);
        assert.equal(run.code, code, run.stdout + run.stderr);
        assert.match(run.stderr, stderr);
      });
    }
  });
});

Deno.test("chronicle diff SNAPSHOT_ID keeps its meaning; --patch adds each file's unified diff", () =>
  withHistory(async (root, id) => {
    const plain = await chronicle(root, id.slice(0, 8));
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, /^modified\s+notes\.md\s+9 bytes -> 9 bytes\n$/);
    const patch = await chronicle(root, id.slice(0, 8), "--patch");
    assert.equal(patch.code, 0, patch.stderr);
    assert.equal(
      patch.stdout.split("\n").slice(1).join("\n"),
      "--- a/notes.md\n+++ b/notes.md\n@@ -1,2 +1,2 @@\n title\n-v2\n+v3\n",
    );
    const json = await chronicle(root, id, "--patch", "--json");
    assert.equal(json.code, 0, json.stderr);
    const body = JSON.parse(json.stdout);
    assert.equal(body.snapshot_id, id);
    assert.deepEqual(
      body.patches.map((
        p: { path: string; added: number; removed: number },
      ) => [p.path, p.added, p.removed]),
      [["notes.md", 1, 1]],
    );
    const withoutPatch = JSON.parse((await chronicle(root, id, "--json")).stdout);
    assert.equal(withoutPatch.patches, undefined, "--json alone is as before");
  }));

Deno.test("chronicle diff --help tells both forms apart", async () => {
  const help = await runChronicle(["diff", "--help"]);
  assert.equal(help.code, 0, help.stderr);
  assert.match(help.stdout, /chronicle diff PATH --from N \[--to M\]/);
  assert.match(help.stdout, /chronicle diff SNAPSHOT_ID \[--patch\]/);
  assert.match(help.stdout, /a path when --from is given, else a snapshot id/);
});
