import assert from "node:assert/strict";
import { normalizeWorkspacePath, PathError, wirePathProblem } from "../../lib/paths/mod.ts";

Deno.test("normalizeWorkspacePath() normalizes safe paths", () => {
  const table = [
    { input: "a.txt", expected: "a.txt" },
    { input: "./src//main.ts", expected: "src/main.ts" },
    { input: "src/./x/", expected: "src/x" },
    { input: "名前/ç.txt", expected: "名前/ç.txt" },
    { input: ".chronicleignore", expected: ".chronicleignore" },
    { input: "n".repeat(255), expected: "n".repeat(255) },
    { input: `d/${"€".repeat(85)}`, expected: `d/${"€".repeat(85)}` }, // 255 bytes
    { input: "é".repeat(127), expected: "é".repeat(127) }, // 254 bytes
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
    { input: `d/${"n".repeat(256)}`, reason: "longer than 255 bytes" },
    { input: "é".repeat(128), reason: "longer than 255 bytes" },
    { input: `d/${"€".repeat(86)}`, reason: "longer than 255 bytes" }, // 258 bytes
    { input: "😀".repeat(64), reason: "longer than 255 bytes" }, // 256 bytes, 128 code units
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

Deno.test("wirePathProblem() accepts safe normalized paths and says what is wrong with the rest", () => {
  const cases: Array<[string, string | null, boolean]> = [
    ["src/a.ts", null, false],
    ["naïve/résumé.txt", null, false],
    ["/etc/passwd", "leaves the workspace", true],
    ["a/../../b", "leaves the workspace", true],
    ["a//b", "not normalized", false],
    ["./a", "not normalized", false],
    [".chronicle/db", "data folder", false],
    ["a\0b", "NUL byte", false],
  ];
  for (const [path, expected, escapes] of cases) {
    const problem = wirePathProblem(path, ".chronicle");
    if (expected === null) {
      assert.equal(problem, null, path);
      continue;
    }
    assert.ok(problem !== null, `${JSON.stringify(path)} is refused`);
    assert.ok(problem.problem.includes(expected), `${JSON.stringify(path)}: ${problem.problem}`);
    assert.equal(problem.escapes, escapes, path);
  }
});
