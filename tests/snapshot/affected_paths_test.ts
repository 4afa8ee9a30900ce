import { PathError } from "../../lib/paths/mod.ts";
import { type Action, affectedPaths, resolveActionPath } from "../../lib/snapshot/mod.ts";
import { dataDirWithin } from "../../lib/snapshot/affected_paths.ts";
import { assertEquals, assertThrows } from "./_assert.ts";

const options = { root: "/ws", dataDir: ".chronicle" };

Deno.test("affectedPaths() decides the paths of each action type", () => {
  const cases: Array<
    { description: string; action: Action; expected: string[] | null; summary?: string }
  > = [
    {
      description: "write_file",
      action: { type: "write_file", payload: { path: "a.ts" } },
      expected: ["a.ts:file"],
      summary: "write_file: a.ts",
    },
    {
      description: "delete_file, absolute inside",
      action: { type: "delete_file", payload: { path: "/ws/src/a.ts" } },
      expected: ["src/a.ts:file"],
    },
    {
      description: "move_file, both sides",
      action: { type: "move_file", payload: { source: "a", destination: "b/c" } },
      expected: ["a:file", "b/c:file"],
      summary: "move_file: a -> b/c",
    },
    {
      description: "move_file, path as source",
      action: { type: "move_file", payload: { path: "a", destination: "b" } },
      expected: ["a:file", "b:file"],
    },
    {
      description: "move_file onto itself",
      action: { type: "move_file", payload: { source: "a", destination: "./a" } },
      expected: ["a:file"],
    },
    {
      description: "copy_file, destination only",
      action: { type: "copy_file", payload: { source: "a", destination: "b" } },
      expected: ["b:file"],
    },
    {
      description: "create_dir",
      action: { type: "create_dir", payload: { path: "d/" } },
      expected: ["d:dir"],
    },
    {
      description: "delete_dir",
      action: { type: "delete_dir", payload: { path: "x/../d" } },
      expected: ["d:dir"],
    },
    {
      description: "move_dir",
      action: { type: "move_dir", payload: { source: "d", destination: "e" } },
      expected: ["d:dir", "e:dir"],
    },
    {
      description: "read_file",
      action: { type: "read_file", payload: { path: "a" } },
      expected: null,
    },
    {
      description: "list_directory",
      action: { type: "list_directory", payload: {} },
      expected: null,
    },
    {
      description: "unknown type",
      action: { type: "WRITE_FILE", payload: { path: "a" } },
      expected: null,
    },
  ];
  for (const { description, action, expected, summary } of cases) {
    const decided = affectedPaths(action, options);
    assertEquals(
      decided?.targets.map((t) => `${t.path}:${t.absentKind}`) ?? null,
      expected,
      description,
    );
    if (summary) assertEquals(decided?.summary, summary, description);
  }
});

Deno.test("affectedPaths() refuses bad payloads and paths with clear errors", () => {
  const cases: Array<
    { action: Action; error: typeof TypeError | typeof PathError; includes: string }
  > = [
    { action: { type: "write_file" }, error: TypeError, includes: 'needs a "path" string' },
    {
      action: { type: "write_file", payload: { path: 7 } },
      error: TypeError,
      includes: '"path" to be a string',
    },
    {
      action: { type: "move_file", payload: { source: "a" } },
      error: TypeError,
      includes: '"destination"',
    },
    {
      action: { type: "write_file", payload: { path: "../x" } },
      error: PathError,
      includes: 'resolves outside the workspace "/ws"',
    },
    {
      action: { type: "write_file", payload: { path: "/etc/passwd" } },
      error: PathError,
      includes: "outside",
    },
    {
      action: { type: "write_file", payload: { path: "/wsx/a" } },
      error: PathError,
      includes: "outside",
    },
    {
      action: { type: "delete_dir", payload: { path: "/ws" } },
      error: PathError,
      includes: "root itself",
    },
    {
      action: { type: "write_file", payload: { path: ".chronicle/x" } },
      error: PathError,
      includes: "data folder",
    },
    {
      action: { type: "write_file", payload: { path: "a\0b" } },
      error: PathError,
      includes: "NUL",
    },
    {
      action: { type: "move_file", payload: { source: "a", destination: "../b" } },
      error: PathError,
      includes: "outside",
    },
  ];
  for (const { action, error, includes } of cases) {
    assertThrows(() => affectedPaths(action, options), error, includes);
  }
  assertThrows(() => affectedPaths({} as Action, options), TypeError, '"type"');
});

Deno.test("resolveActionPath() normalizes inside paths", () => {
  assertEquals(resolveActionPath("./a//b/./c", options), "a/b/c");
  assertEquals(resolveActionPath("/ws/a/../b", options), "b");
});

Deno.test("dataDirWithin() gives the data folder relative to the root when inside", async (t) => {
  const cases: Array<{ description: string; input: string; expected: string | undefined }> = [
    { description: "the usual place", input: "/ws/.chronicle", expected: ".chronicle" },
    { description: "deeper inside", input: "/ws/var/chronicle", expected: "var/chronicle" },
    { description: "the root itself", input: "/ws", expected: undefined },
    { description: "outside", input: "/data/chronicle", expected: undefined },
    { description: "the root's parent", input: "/", expected: undefined },
    { description: "a sibling sharing a prefix", input: "/ws2/.chronicle", expected: undefined },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => assertEquals(dataDirWithin("/ws", input), expected));
  }
});
