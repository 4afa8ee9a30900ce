/**
 * diffIterations() and snapshotPatches() on a real workspace, store and CAS.
 */
import assert from "node:assert/strict";
import {
  diffIterations,
  HistoryError,
  iterationDiffText,
  MAX_DIFF_BYTES,
  snapshotPatches,
} from "../../lib/history/mod.ts";
import { DEFAULT_SNAPSHOT_CONFIG, openWorkspaceSnapshots } from "../../lib/snapshot/mod.ts";
import { Workspace } from "../../lib/workspace/mod.ts";
import { put, withTempDir } from "../_helpers/temp_dir.ts";

const text = (s: string) => new TextEncoder().encode(s);

/** A version of `f.txt`: its text, `null` for a deletion, or raw bytes. */
type Version = string | null | Uint8Array;

async function withVersions(
  versions: Version[],
  work: (workspace: Workspace) => Promise<void>,
): Promise<void> {
  await withTempDir(async (root) => {
    const workspace = await Workspace.open({ root });
    try {
      for (const version of versions) {
        if (version === null) await workspace.remove("f.txt");
        else {await workspace.writeBytes(
            "f.txt",
            typeof version === "string" ? text(version) : version,
          );}
      }
      await work(workspace);
    } finally {
      await workspace.close();
    }
  });
}

interface Expected {
  added?: number;
  removed?: number;
  binary?: boolean;
  identical?: boolean;
  notes?: string[];
  text?: string;
  error?: HistoryError["code"];
}

const CASES: Array<
  {
    description: string;
    input: { versions: Version[]; from: number; to?: number };
    expected: Expected;
  }
> = [
  {
    description: "a changed line, to the latest by default",
    input: { versions: ["a\nb\nc\n", "a\nB\nc\n"], from: 1 },
    expected: {
      added: 1,
      removed: 1,
      notes: [],
      text: "--- a/f.txt@1\n+++ b/f.txt@2\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
    },
  },
  {
    description: "backwards, from a newer iteration to an older one",
    input: { versions: ["one\n", "one\ntwo\n", "one\ntwo\nthree\n"], from: 3, to: 1 },
    expected: { added: 0, removed: 2, notes: [] },
  },
  {
    description: "a deletion as the new side is compared as empty, with a note",
    input: { versions: ["x\ny\n", null], from: 1 },
    expected: { added: 0, removed: 2, notes: ["iteration 2 is a deletion, shown as empty"] },
  },
  {
    description: "a deletion as the old side is compared as empty, with a note",
    input: { versions: ["x\n", null, "back\n"], from: 2, to: 3 },
    expected: { added: 1, removed: 0, notes: ["iteration 2 is a deletion, shown as empty"] },
  },
  {
    description: "binary content is named, not shown",
    input: { versions: [new Uint8Array([0, 1, 2]), new Uint8Array([0, 1, 3])], from: 1 },
    expected: { binary: true, text: "Binary files a/f.txt@1 and b/f.txt@2 differ\n" },
  },
  {
    description: "the same content in two iterations says so",
    input: { versions: ["same\n", "other\n", "same\n"], from: 1, to: 3 },
    expected: { identical: true, notes: ["iterations 1 and 3 hold the same content"], text: "" },
  },
  {
    description: "an unknown iteration is not_found",
    input: { versions: ["a\n"], from: 5 },
    expected: { error: "not_found" },
  },
  {
    description: "an unknown --to is not_found",
    input: { versions: ["a\n"], from: 1, to: 2 },
    expected: { error: "not_found" },
  },
  {
    description: "two deletions have nothing to compare",
    input: { versions: ["a\n", null, "b\n", null], from: 2, to: 4 },
    expected: { error: "deleted" },
  },
];

Deno.test("diffIterations() compares two iterations of a path", async (t) => {
  for (const { description, input, expected } of CASES) {
    await t.step(description, () =>
      withVersions(input.versions, async (workspace) => {
        const run = () =>
          diffIterations(workspace.store, workspace.cas, "f.txt", {
            from: input.from,
            to: input.to,
          });
        if (expected.error) {
          await assert.rejects(
            run,
            (error) => error instanceof HistoryError && error.code === expected.error,
          );
          return;
        }
        const diff = await run();
        const picked = Object.fromEntries(
          Object.keys(expected).map((key) => [key, diff[key as keyof typeof diff]]),
        );
        assert.deepEqual(picked, expected);
        assert.equal(diff.from.iteration, input.from);
      }));
  }
});

Deno.test("diffIterations() of an unknown path is not_found", () =>
  withVersions(["a\n"], async (workspace) => {
    await assert.rejects(
      () => diffIterations(workspace.store, workspace.cas, "nope.txt", { from: 1 }),
      (error) =>
        error instanceof HistoryError && error.code === "not_found" &&
        /"nope\.txt"/.test(error.message),
    );
  }));

Deno.test("diffIterations() refuses content over MAX_DIFF_BYTES", () =>
  withVersions([new Uint8Array(MAX_DIFF_BYTES + 1).fill(97), "small\n"], async (workspace) => {
    await assert.rejects(
      () => diffIterations(workspace.store, workspace.cas, "f.txt", { from: 1 }),
      (error) => error instanceof HistoryError && error.code === "too_large",
    );
  }));

Deno.test("iterationDiffText() puts the notes before the diff, where patch skips them", () =>
  withVersions(["x\n", null], async (workspace) => {
    const diff = await diffIterations(workspace.store, workspace.cas, "f.txt", { from: 1 });
    assert.equal(
      iterationDiffText(diff),
      "note: iteration 2 is a deletion, shown as empty\n--- a/f.txt@1\n+++ b/f.txt@2\n@@ -1 +0,0 @@\n-x\n",
    );
  }));

Deno.test("snapshotPatches() diffs each changed file's captured content against the disk", () =>
  withTempDir(async (root) => {
    await put(root, "a.txt", "one\ntwo\n");
    await put(root, "gone.txt", "bye\n");
    await put(root, "bin.dat", "\u0000\u0001");
    const workspace = await Workspace.open({ root });
    try {
      await workspace.scan();
      const snapshots = openWorkspaceSnapshots(workspace, {
        config: DEFAULT_SNAPSHOT_CONFIG,
        offTheRecord: false,
      });
      const ids: string[] = [];
      for (const path of ["a.txt", "gone.txt", "bin.dat", "new.txt"]) {
        const taken = await snapshots.snapshot({ type: "write_file", payload: { path } });
        ids.push(taken!.id);
      }
      await put(root, "a.txt", "one\n2\n");
      await Deno.remove(`${root}/gone.txt`);
      await put(root, "bin.dat", "\u0000\u0002");
      await put(root, "new.txt", "hello\n");
      const texts = [];
      for (const id of ids) {
        const diff = await snapshots.diff(id);
        const [patch] = await snapshotPatches(root, workspace.cas, diff.changes);
        texts.push(patch!.note ?? patch!.text);
      }
      assert.deepEqual(texts, [
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n",
        "--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n",
        "Binary files a/bin.dat and b/bin.dat differ\n",
        "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\n",
      ]);
      // Changed again after the diff was computed: a note, never bytes the diff did not see.
      const diff = await snapshots.diff(ids[0]!);
      await put(root, "a.txt", "changed again\n");
      const [late] = await snapshotPatches(root, workspace.cas, diff.changes);
      assert.equal(late!.note, "changed again since the diff was computed");
      assert.equal(late!.text, "");
    } finally {
      await workspace.close();
    }
  }));
