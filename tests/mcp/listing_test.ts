import { nextPage, summarizeListing } from "../../lib/mcp/listing.ts";
import { capText, MAX_RESULT_CHARS } from "../../lib/mcp/results.ts";
import type { Iteration } from "../../lib/store/mod.ts";
import { assertEquals } from "../_helpers/assert.ts";

function file(path: string, sequence: number): Iteration {
  return {
    path,
    iteration: 1,
    sequence,
    timestamp: Date.UTC(2026, 0, 1) + sequence * 1000,
    size: 10,
    hash: "ab".repeat(32),
    mode: 0o100644,
    deleted: false,
    origin: "local",
  };
}

/** `path` for a file entry, `path/ (N)` for a folder. */
function shape(entries: ReturnType<typeof summarizeListing>): string[] {
  return entries.map((e) => e.type === "file" ? e.path : `${e.path}/ (${e.files})`);
}

Deno.test("summarizeListing: files to a depth, deeper ones counted in their folder", async (t) => {
  const live = [
    file("README.md", 1),
    file("src/app.ts", 2),
    file("src/lib/a.ts", 3),
    file("src/lib/b.ts", 4),
    file("src/lib/deep/c.ts", 5),
    file("tests/x_test.ts", 6),
  ];
  const folder = (path: string, sequence: number): Iteration => ({
    ...file(path, sequence),
    size: 0,
    mode: 0o040755,
  });
  const withFolders = [
    file("README.md", 1),
    folder("empty", 2),
    folder("src", 3),
    file("src/app.ts", 4),
    folder("src/lib", 5),
    file("src/lib/a.ts", 6),
    folder("src/lib/void", 7),
  ];
  const cases = [
    {
      description: "no depth: every file",
      input: { live, dir: "", depth: undefined },
      expected: live.map((f) => f.path),
    },
    {
      description: "depth 1 at the root: top files, a folder per top folder",
      input: { live, dir: "", depth: 1 },
      expected: ["README.md", "src/ (4)", "tests/ (1)"],
    },
    {
      description: "depth 2 at the root",
      input: { live, dir: "", depth: 2 },
      expected: ["README.md", "src/app.ts", "src/lib/ (3)", "tests/x_test.ts"],
    },
    {
      description: "depth counts from the folder listed",
      input: { live: live.slice(1, 5), dir: "src", depth: 1 },
      expected: ["src/app.ts", "src/lib/ (3)"],
    },
    {
      description: "a depth deeper than the tree changes nothing",
      input: { live, dir: "", depth: 64 },
      expected: live.map((f) => f.path),
    },
    { description: "nothing to list", input: { live: [], dir: "", depth: 1 }, expected: [] },
    {
      description: "recorded folders: an empty one is shown, one holding files is not repeated",
      input: { live: withFolders, dir: "", depth: undefined },
      expected: ["README.md", "empty/ (0)", "src/app.ts", "src/lib/a.ts", "src/lib/void/ (0)"],
    },
    {
      description: "recorded folders at a depth: an empty one beyond it is not shown",
      input: { live: withFolders, dir: "", depth: 1 },
      expected: ["README.md", "empty/ (0)", "src/ (2)"],
    },
    {
      description: "the folder listed is not an entry of itself",
      input: { live: withFolders.slice(3), dir: "src", depth: 1 },
      expected: ["src/app.ts", "src/lib/ (1)"],
    },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => {
      assertEquals(shape(summarizeListing(input.live, input.dir, input.depth)), expected);
    });
  }
  await t.step("a file entry carries its iteration, sequence, time, size and origin", () => {
    assertEquals(summarizeListing([file("a.md", 7)], "", undefined), [{
      path: "a.md",
      type: "file",
      iteration: 1,
      sequence: 7,
      time: "2026-01-01T00:00:07.000Z",
      size: 10,
      origin: "local",
    }]);
  });
});

Deno.test("nextPage: next_offset while more entries remain", async (t) => {
  const cases = [
    { description: "first of several pages", input: [0, 200, 450], expected: 200 },
    { description: "a middle page", input: [200, 200, 450], expected: 400 },
    { description: "the last page", input: [400, 50, 450], expected: undefined },
    { description: "exactly one full page", input: [0, 200, 200], expected: undefined },
    { description: "an offset past the end", input: [900, 0, 450], expected: undefined },
    { description: "empty", input: [0, 0, 0], expected: undefined },
  ] as const;
  for (const { description, input, expected } of cases) {
    await t.step(description, () => {
      const [offset, shown, total] = input;
      assertEquals(
        nextPage(offset, shown, total),
        expected === undefined ? {} : { truncated: true, next_offset: expected },
      );
    });
  }
});

Deno.test("capText: long text cut with a note saying how much and what to do", async (t) => {
  const cases = [
    { description: "short text as is", input: { text: "abc", max: 10 }, expected: "abc" },
    {
      description: "exactly the limit as is",
      input: { text: "a".repeat(10), max: 10 },
      expected: "a".repeat(10),
    },
    {
      description: "one over the limit is cut",
      input: { text: "a".repeat(11), max: 10 },
      expected: `${"a".repeat(10)}\n[truncated: 11 characters, 10 shown; page]`,
    },
    {
      description: "the default limit",
      input: { text: "b".repeat(MAX_RESULT_CHARS + 5), max: undefined },
      expected: `${"b".repeat(MAX_RESULT_CHARS)}\n[truncated: ${
        MAX_RESULT_CHARS + 5
      } characters, ${MAX_RESULT_CHARS} shown; page]`,
    },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => {
      assertEquals(capText(input.text, "page", input.max), expected);
    });
  }
});
