import {
  type CapturedFile,
  diffFiles,
  mergeForUndo,
  planRollback,
  rootsOf,
} from "../../lib/snapshot/mod.ts";
import { needsContent, rootTargets } from "../../lib/snapshot/change_plan.ts";
import { assertEquals } from "./_assert.ts";

const H1 = "11".repeat(32);
const H2 = "22".repeat(32);
const f = (path: string, hash = H1, mode = 0o100644): CapturedFile => ({
  path,
  state: "present",
  kind: "file",
  hash,
  size: 1,
  mode,
});
const link = (path: string, hash = H1): CapturedFile => ({
  ...f(path, hash, 0o120777),
  kind: "symlink",
});
const dir = (path: string, mode = 0o40755): CapturedFile => ({
  path,
  state: "present",
  kind: "dir",
  hash: "",
  size: 0,
  mode,
});
const absent = (path: string, kind: CapturedFile["kind"] = "file"): CapturedFile => ({
  path,
  state: "absent",
  kind,
  hash: "",
  size: 0,
  mode: 0,
});

Deno.test("rootsOf() keeps only top-level entries", () => {
  assertEquals(rootsOf([f("a/x"), dir("a"), absent("b"), f("a/y/z"), f("ab")]), ["a", "ab", "b"]);
  assertEquals(rootsOf([]), []);
});

Deno.test("diffFiles() reports created, modified and deleted paths", () => {
  const cases: Array<
    { description: string; before: CapturedFile[]; after: CapturedFile[]; expected: string[] }
  > = [
    { description: "unchanged", before: [f("a")], after: [f("a")], expected: [] },
    {
      description: "content changed",
      before: [f("a")],
      after: [f("a", H2)],
      expected: ["a modified"],
    },
    {
      description: "mode changed",
      before: [f("a")],
      after: [f("a", H1, 0o100755)],
      expected: ["a modified"],
    },
    {
      description: "file became link",
      before: [f("a")],
      after: [link("a")],
      expected: ["a modified"],
    },
    { description: "deleted", before: [f("a")], after: [absent("a")], expected: ["a deleted"] },
    { description: "created", before: [absent("a")], after: [f("a")], expected: ["a created"] },
    { description: "both absent", before: [absent("a")], after: [absent("a")], expected: [] },
    {
      description: "files appear in a captured folder",
      before: [dir("d"), f("d/x")],
      after: [dir("d"), f("d/x"), f("d/y")],
      expected: ["d/y created"],
    },
    {
      description: "a missing ancestor captured now",
      before: [dir("d"), f("d/x")],
      after: [absent("d", "dir")],
      expected: ["d deleted", "d/x deleted"],
    },
  ];
  for (const { description, before, after, expected } of cases) {
    assertEquals(
      diffFiles(before, after).map((c) => `${c.path} ${c.change}`),
      expected,
      description,
    );
  }
  const [change] = diffFiles([f("a")], [f("a", H2)]);
  assertEquals(change, {
    path: "a",
    change: "modified",
    kind: "file",
    beforeHash: H1,
    afterHash: H2,
    beforeSize: 1,
    afterSize: 1,
    beforeMode: 0o100644,
    afterMode: 0o100644,
  });
});

Deno.test("planRollback() orders removals, folders, writes and modes", () => {
  const show = (desired: CapturedFile[], current: CapturedFile[]) =>
    planRollback(desired, current).map((s) =>
      `${s.op} ${s.path}${"mode" in s ? ` ${s.mode.toString(8)}` : ""}`
    );
  const cases: Array<
    { description: string; desired: CapturedFile[]; current: CapturedFile[]; expected: string[] }
  > = [
    { description: "nothing changed", desired: [f("a")], current: [f("a")], expected: [] },
    {
      description: "content back",
      desired: [f("a")],
      current: [f("a", H2)],
      expected: ["write a 100644"],
    },
    {
      description: "creation undone",
      desired: [absent("a")],
      current: [f("a")],
      expected: ["remove a"],
    },
    {
      description: "deletion undone",
      desired: [f("a")],
      current: [absent("a")],
      expected: ["write a 100644"],
    },
    {
      description: "link restored over a file",
      desired: [link("a")],
      current: [f("a")],
      expected: ["write a 120777"],
    },
    {
      description: "a created tree removed deepest first",
      desired: [absent("n", "dir")],
      current: [dir("n"), dir("n/m"), f("n/m/x"), f("n/y")],
      expected: ["remove n/m/x", "remove n/m", "remove n/y", "remove n"],
    },
    {
      description: "a deleted tree recreated, modes set deepest first last",
      desired: [dir("t", 0o40700), dir("t/e"), f("t/x")],
      current: [absent("t", "dir")],
      expected: ["mkdir t", "mkdir t/e", "write t/x 100644", "chmod t/e 40755", "chmod t 40700"],
    },
    {
      description: "a folder where a file was",
      desired: [f("p")],
      current: [dir("p"), f("p/q")],
      expected: ["remove p/q", "remove p", "write p 100644"],
    },
    {
      description: "a file where a folder was",
      desired: [dir("p"), f("p/q")],
      current: [f("p", H2)],
      expected: ["remove p", "mkdir p", "write p/q 100644", "chmod p 40755"],
    },
    {
      description: "a folder's mode only",
      desired: [dir("p", 0o40700)],
      current: [dir("p")],
      expected: ["chmod p 40700"],
    },
  ];
  for (const { description, desired, current, expected } of cases) {
    assertEquals(show(desired, current), expected, description);
  }
});

Deno.test("mergeForUndo() takes each path from the oldest snapshot covering it", () => {
  const cases: Array<
    { description: string; newestFirst: CapturedFile[][]; expected: CapturedFile[] }
  > = [
    { description: "one snapshot", newestFirst: [[f("a")]], expected: [f("a")] },
    {
      description: "edited twice",
      newestFirst: [[f("a", H2)], [f("a", H1)]],
      expected: [f("a", H1)],
    },
    {
      description: "an older folder capture covers a newer file capture inside it",
      newestFirst: [[absent("d/y")], [dir("d"), f("d/x")]],
      expected: [dir("d"), f("d/x")],
    },
    {
      description: "an older capture inside a newer folder capture wins for its path",
      newestFirst: [[dir("d"), f("d/x"), f("d/y", H2)], [absent("d/y")]],
      expected: [dir("d"), f("d/x"), absent("d/y")],
    },
    {
      description: "unrelated paths combine",
      newestFirst: [[f("b")], [absent("a")]],
      expected: [absent("a"), f("b")],
    },
  ];
  for (const { description, newestFirst, expected } of cases) {
    assertEquals(mergeForUndo(newestFirst), expected, description);
  }
});

Deno.test("rootTargets() captures the roots again, folders as folders", async (t) => {
  const cases: Array<
    { description: string; input: CapturedFile[]; expected: [string, "file" | "dir"][] }
  > = [
    { description: "nothing", input: [], expected: [] },
    { description: "a file", input: [f("a")], expected: [["a", "file"]] },
    { description: "an absent file", input: [absent("a")], expected: [["a", "file"]] },
    { description: "an absent folder", input: [absent("d", "dir")], expected: [["d", "dir"]] },
    {
      description: "a folder with entries: only the folder",
      input: [dir("d"), f("d/x"), dir("d/e")],
      expected: [["d", "dir"]],
    },
    { description: "a link", input: [link("l")], expected: [["l", "file"]] },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => {
      assertEquals(rootTargets(input).map((t) => [t.path, t.absentKind]), expected);
    });
  }
});

Deno.test("needsContent() is true for present files and links only", async (t) => {
  const cases: Array<{ description: string; input: CapturedFile; expected: boolean }> = [
    { description: "a file", input: f("a"), expected: true },
    { description: "a link", input: link("l"), expected: true },
    { description: "a folder", input: dir("d"), expected: false },
    { description: "an absent file", input: absent("a"), expected: false },
    { description: "an absent folder", input: absent("d", "dir"), expected: false },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => assertEquals(needsContent(input), expected));
  }
});
