import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { unifiedDiff } from "../../lib/textdiff/mod.ts";

const bytes = (s: string) => new TextEncoder().encode(s);
const labels = { oldLabel: "a/f", newLabel: "b/f" };

Deno.test("unifiedDiff() prints what diff -u prints", async (t) => {
  const table: { description: string; old: string; new: string; expected: string }[] = [
    { description: "identical", old: "a\n", new: "a\n", expected: "" },
    {
      description: "a changed line",
      old: "a\nb\nc\n",
      new: "a\nB\nc\n",
      expected: "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
    },
    {
      description: "from an empty file",
      old: "",
      new: "x\n",
      expected: "--- a/f\n+++ b/f\n@@ -0,0 +1 @@\n+x\n",
    },
    {
      description: "to an empty file",
      old: "x\ny\n",
      new: "",
      expected: "--- a/f\n+++ b/f\n@@ -1,2 +0,0 @@\n-x\n-y\n",
    },
    {
      description: "a missing final newline",
      old: "x\n",
      new: "x",
      expected: "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-x\n+x\n\\ No newline at end of file\n",
    },
  ];
  for (const row of table) {
    await t.step(row.description, () => {
      strictEqual(unifiedDiff(bytes(row.old), bytes(row.new), labels).text, row.expected);
    });
  }
});

Deno.test("unifiedDiff() counts lines and keeps hunks apart beyond the context", () => {
  const old = Array.from({ length: 20 }, (_, i) => `line ${i}`).join("\n") + "\n";
  const changed = old.replace("line 1\n", "one\n").replace("line 18\n", "eighteen\nextra\n");
  const diff = unifiedDiff(bytes(old), bytes(changed), { ...labels, context: 2 });
  strictEqual(diff.hunks.length, 2);
  deepStrictEqual([diff.added, diff.removed], [3, 2]);
  deepStrictEqual(diff.hunks[0]!.lines.slice(0, 3), [
    { kind: " ", text: "line 0" },
    { kind: "-", text: "line 1" },
    { kind: "+", text: "one" },
  ]);
});

Deno.test("unifiedDiff() says binary content differs instead of printing it", async (t) => {
  const table = [
    { description: "a NUL byte", old: new Uint8Array([104, 0, 105]), new: bytes("hi\n") },
    { description: "invalid UTF-8", old: bytes("hi\n"), new: new Uint8Array([0xff, 0xfe, 10]) },
  ];
  for (const row of table) {
    await t.step(row.description, () => {
      const diff = unifiedDiff(row.old, row.new, labels);
      deepStrictEqual([diff.binary, diff.text], [true, "Binary files a/f and b/f differ\n"]);
    });
  }
});
