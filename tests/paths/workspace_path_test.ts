import assert from "node:assert/strict";
import { normalizeWorkspacePath, PathError } from "../../lib/paths/mod.ts";

Deno.test("normalizeWorkspacePath() normalizes safe paths", () => {
  const table = [
    { input: "a.txt", expected: "a.txt" },
    { input: "./src//main.ts", expected: "src/main.ts" },
    { input: "src/./x/", expected: "src/x" },
    { input: "名前/ç.txt", expected: "名前/ç.txt" },
    { input: ".chronicleignore", expected: ".chronicleignore" },
  ];
  for (const { input, expected } of table) {
    assert.deepEqual(normalizeWorkspacePath(input, { dataDir: ".chronicle" }), expected);
  }
});

Deno.test("normalizeWorkspacePath() refuses unsafe paths with a reason", () => {
  const table = [
    { input: "../etc/passwd", reason: "'..'" },
    { input: "a/../../b", reason: "'..'" },
    { input: "/etc/passwd", reason: "absolute" },
    { input: "a\0b", reason: "NUL" },
    { input: "a\nb", reason: "control" },
    { input: "a\\b", reason: "backslash" },
    { input: "", reason: "empty" },
    { input: "./", reason: "empty" },
    { input: ".chronicle/chronicle.db", reason: "data folder" },
    { input: ".chronicle", reason: "data folder" },
  ];
  for (const { input, reason } of table) {
    assert.throws(
      () => normalizeWorkspacePath(input, { dataDir: ".chronicle" }),
      (error: unknown) => error instanceof PathError && error.message.includes(reason),
      JSON.stringify(input),
    );
  }
  assert.deepEqual(normalizeWorkspacePath("", { allowRoot: true }), "");
});
