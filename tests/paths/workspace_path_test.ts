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
    { input: "..a/.b/c..", expected: "..a/.b/c.." }, // dots inside names are names
    { input: "a/.", expected: "a" },
    { input: "a/b/", expected: "a/b" },
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
    { input: "a\x7fb", reason: "control" },
    { input: "a/..", reason: "'..'" },
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

/** The full check alone, as it was before normalized paths took a shorter way (the oracle). */
function fullCheck(path: string, dataDir: string): string {
  // deno-lint-ignore no-control-regex -- control characters are exactly what is refused
  if (/[\0\x01-\x1f\x7f]/.test(path)) throw new PathError(path, "control or NUL");
  if (path.startsWith("/") || path.includes("\\")) throw new PathError(path, "absolute or \\");
  const segments = path.split("/").filter((segment) => segment !== "" && segment !== ".");
  if (segments.includes("..")) throw new PathError(path, "'..'");
  const normalized = segments.join("/");
  if (normalized === "" || normalized.length > 4096) throw new PathError(path, "length");
  const utf8 = new TextEncoder();
  if (segments.some((segment) => utf8.encode(segment).length > 255)) {
    throw new PathError(path, "name");
  }
  if (normalized === dataDir || normalized.startsWith(dataDir + "/")) {
    throw new PathError(path, "data folder");
  }
  return normalized;
}

Deno.test("normalizeWorkspacePath() answers as the full check does for random paths", () => {
  // Random paths over the characters that matter, long names around the 255-byte limit
  // included: the same path back, or a refusal, exactly when the full check says so.
  const pieces = [
    "a",
    "é",
    "€",
    "😀",
    ".",
    "..",
    "/",
    "//",
    "\\",
    "\0",
    "\n",
    "\x7f",
    ".chronicle",
  ];
  let seed = 17; // mulberry32: a fixed sequence, every bit of it random enough
  const random = (below: number) => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) % below;
  };
  for (let round = 0; round < 20_000; round++) {
    let path = "";
    const count = random(12);
    for (let i = 0; i < count; i++) {
      const piece = pieces[random(pieces.length)]!;
      path += random(40) === 0 ? piece.repeat(60 + random(80)) : piece;
    }
    let expected: string | null;
    try {
      expected = fullCheck(path, ".chronicle");
    } catch {
      expected = null;
    }
    let actual: string | null;
    try {
      actual = normalizeWorkspacePath(path, { dataDir: ".chronicle" });
    } catch (error) {
      assert.ok(error instanceof PathError, JSON.stringify(path));
      actual = null;
    }
    assert.equal(actual, expected, JSON.stringify(path));
  }
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
