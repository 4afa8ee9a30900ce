import assert from "node:assert/strict";
import ignore from "ignore";
import { compilePattern, DirectionalFilter, PathFilter } from "../../lib/filter/mod.ts";

const PATHS: Array<[string, boolean]> = [
  ["a.pyc", false],
  ["src/a.pyc", false],
  ["src/a.py", false],
  ["node_modules", true],
  ["node_modules/x/index.js", false],
  ["pkg/node_modules/x.js", false],
  ["build", true],
  ["build", false],
  ["build/out.o", false],
  ["src/build/out.o", false],
  ["docs/build/out.o", false],
  ["my-temp-file.txt", false],
  ["dir/sub/file", false],
  ["dir/subfile", false],
  ["x/dir/sub/file", false],
  [".git/HEAD", false],
  ["logs", true],
  ["logs/today.log", false],
  [".chronicle-link-1234", false],
  ["src/.chronicle-link-x/y", false],
  ["src/.chronicle-lin", false],
  ["tmpdir", true],
  ["a/tmpfile", false],
  ["A.PYC", false],
  ["Build", true],
  ["TMPdir", true],
  ["src/My-Temp-File.txt", false],
];

const PATTERNS = [
  "*.pyc",
  "node_modules",
  "node_modules/**",
  "build/",
  "/build",
  "*temp*",
  "dir/sub",
  "/dir/sub/",
  ".git/",
  "logs/",
  ".chronicle-link-*",
  "tmp*/",
];

Deno.test("PathFilter() fast paths agree with the full gitignore matcher", async (t) => {
  for (const pattern of PATTERNS) {
    await t.step(pattern, () => {
      // Case-sensitive, as git is on Linux.
      const reference = ignore({ ignorecase: false }).add(pattern);
      const filter = new PathFilter([pattern]);
      for (const [path, isDir] of PATHS) {
        const expected = reference.ignores(isDir ? path + "/" : path);
        assert.deepEqual(
          filter.ignores(path, isDir),
          expected,
          `${pattern} on ${path} (dir ${isDir})`,
        );
      }
    });
  }
});

Deno.test("compilePattern() classifies simple patterns and defers the rest", () => {
  const table: Array<{ description: string; input: string; expected: unknown }> = [
    {
      description: "suffix",
      input: "*.log",
      expected: { kind: "suffix", suffix: ".log", dirOnly: false },
    },
    {
      description: "name",
      input: "dist",
      expected: { kind: "segment", name: "dist", dirOnly: false },
    },
    {
      description: "dir name",
      input: "dist/",
      expected: { kind: "segment", name: "dist", dirOnly: true },
    },
    {
      description: "contains",
      input: "*tmp*",
      expected: { kind: "contains", text: "tmp", dirOnly: false },
    },
    {
      description: "start",
      input: "tmp*",
      expected: { kind: "start", start: "tmp", dirOnly: false },
    },
    { description: "prefix", input: "a/b/**", expected: { kind: "contents", prefix: "a/b" } },
    {
      description: "anchored",
      input: "/out",
      expected: { kind: "prefix", prefix: "out", dirOnly: false },
    },
    { description: "comment", input: "# note", expected: null },
    { description: "blank", input: "   ", expected: null },
    { description: "negation", input: "!keep.log", expected: undefined },
    { description: "inner glob", input: "a*b.txt", expected: undefined },
    { description: "double star middle", input: "a/**/b", expected: undefined },
  ];
  for (const { description, input, expected } of table) {
    assert.deepEqual(compilePattern(input), expected, description);
  }
});

Deno.test("PathFilter() honours negation order through the full matcher", () => {
  const filter = new PathFilter(["*.log", "!keep.log"]);
  assert.deepEqual(filter.ignores("a.log"), true);
  assert.deepEqual(filter.ignores("keep.log"), false);
  assert.deepEqual(filter.ignores("src/keep.log"), false);
  assert.deepEqual(filter.ignores("a.txt"), false);
});

Deno.test("PathFilter() matches case-sensitively, fast tests and full matcher alike", () => {
  const filter = new PathFilter(["*.log", "Build*", "src/**/gen_*.ts"]);
  const cases: Array<[string, boolean]> = [
    ["a.log", true],
    ["a.LOG", false],
    ["Build-x", true],
    ["build-x", false],
    ["src/a/gen_x.ts", true],
    ["src/a/GEN_x.ts", false],
  ];
  for (const [path, ignored] of cases) assert.equal(filter.ignores(path), ignored, path);
});

Deno.test("PathFilter() handles complex globs lazily and the root never matches", () => {
  const filter = new PathFilter(["src/**/gen_*.ts", "?.tmp"]);
  assert.deepEqual(filter.ignores("src/a/b/gen_x.ts"), true);
  assert.deepEqual(filter.ignores("src/gen_x.ts"), true);
  assert.deepEqual(filter.ignores("lib/gen_x.ts"), false);
  assert.deepEqual(filter.ignores("a.tmp"), true);
  assert.deepEqual(filter.ignores("ab.tmp"), false);
  assert.deepEqual(filter.ignores(""), false);
});

Deno.test("DirectionalFilter.create() keeps defaults and direction-specific patterns apart", () => {
  const filter = DirectionalFilter.create({
    patterns: ["*.pyc"],
    toReplica: ["secrets/"],
    toMaster: ["build/"],
    dataDir: ".chronicle",
  });
  for (const f of [filter.local, filter.toReplica, filter.toMaster]) {
    assert.deepEqual(f.ignores(".git/config"), true);
    assert.deepEqual(f.ignores(".chronicle/chronicle.db"), true);
    assert.deepEqual(f.ignores("x.pyc"), true);
    assert.deepEqual(f.ignores("src/main.ts"), false);
  }
  assert.deepEqual(filter.toReplica.ignores("secrets/key"), true);
  assert.deepEqual(filter.toMaster.ignores("secrets/key"), false);
  assert.deepEqual(filter.toMaster.ignores("build/a.o"), true);
  assert.deepEqual(filter.toReplica.ignores("build/a.o"), false);
  assert.deepEqual(filter.local.ignores("build/a.o"), false);
});
