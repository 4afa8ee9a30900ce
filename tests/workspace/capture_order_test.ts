/**
 * The order a capture of what is found on disk (a scan, a watcher's batch) records its
 * changes in, which is the order replicas receive them (PROTOCOL.md §8): deletions deepest
 * first, then folders shallowest first, then files and links in the order they were
 * changed (modification time, then path).
 */
import assert from "node:assert/strict";
import type { NewIteration } from "../../lib/store/mod.ts";
import {
  inChangeOrder,
  inGivenOrder,
  pathsInChangeOrder,
} from "../../lib/workspace/capture_order.ts";
import { Workspace } from "../../lib/workspace/mod.ts";
import { put, withTempDir } from "../_helpers/temp_dir.ts";

/** A modification time long past, far from any other, in seconds: `at(0)`, `at(1)`, … */
const at = (second: number) => new Date(Date.UTC(2020, 0, 1, 0, 0, second));

Deno.test("A scan records folders shallowest first, then files in the order they were changed, deletions deepest first", async (t) => {
  const cases = [
    {
      description: "a new tree: its folders by depth, then its files by modification time",
      input: {
        make: [
          { path: "y/w/v.txt", second: 0 },
          { path: "top.txt", second: 1 },
          { path: "a/z.txt", second: 2 },
          { path: "a/b/c.txt", second: 3 },
        ],
        remove: [],
      },
      expected: ["a", "y", "a/b", "y/w", "y/w/v.txt", "top.txt", "a/z.txt", "a/b/c.txt"],
    },
    {
      description: "files modified at the same time: in path order",
      input: {
        make: [
          { path: "b.txt", second: 5 },
          { path: "d/a.txt", second: 5 },
          { path: "a.txt", second: 5 },
          { path: "c.txt", second: 4 },
        ],
        remove: [],
      },
      expected: ["d", "c.txt", "a.txt", "b.txt", "d/a.txt"],
    },
    {
      description: "a tree removed: the deepest paths first",
      input: {
        make: [
          { path: "a/b/c.txt", second: 0 },
          { path: "a/z.txt", second: 0 },
          { path: "top.txt", second: 0 },
        ],
        remove: ["a"],
      },
      expected: ["a/b/c.txt", "a/z.txt", "a/b", "a"],
    },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () =>
      withTempDir(async (root) => {
        for (const { path, second } of input.make) {
          await put(root, path, path);
          await Deno.utime(`${root}/${path}`, at(second), at(second));
        }
        const workspace = await Workspace.open({ root });
        try {
          let { recorded } = await workspace.scan();
          for (const path of input.remove) {
            await Deno.remove(`${root}/${path}`, { recursive: true });
            ({ recorded } = await workspace.scan());
          }
          assert.deepEqual(recorded.map((iteration) => iteration.path), expected);
        } finally {
          await workspace.close();
        }
      }));
  }
});

Deno.test("inChangeOrder() puts deletions, then folders, then files by modification time", async (t) => {
  const file = (path: string): NewIteration => ({
    path,
    hash: "h",
    size: 1,
    mode: 0o100644,
    deleted: false,
    origin: "local",
  });
  const dir = (path: string): NewIteration => ({ ...file(path), size: 0, mode: 0o40755 });
  const gone = (path: string): NewIteration => ({ ...file(path), mode: 0, deleted: true });
  const table = [
    {
      description: "files by modification time, whatever their depth or path",
      input: { changes: [file("a.txt"), file("b/c/d.txt"), file("z.txt")], times: [3, 1, 2] },
      expected: ["b/c/d.txt", "z.txt", "a.txt"],
    },
    {
      description: "files modified at the same time: by path",
      input: { changes: [file("b.txt"), file("a/b.txt"), file("a.txt")], times: [1, 1, 1] },
      expected: ["a.txt", "a/b.txt", "b.txt"],
    },
    {
      description: "a folder before every file, even one modified earlier than it",
      input: { changes: [file("a.txt"), dir("d/e"), dir("d")], times: [1, 5, 9] },
      expected: ["d", "d/e", "a.txt"],
    },
    {
      description: "deletions first, deepest first",
      input: { changes: [file("a.txt"), gone("x"), gone("x/y.txt")], times: [1, 0, 0] },
      expected: ["x/y.txt", "x", "a.txt"],
    },
  ];
  for (const { description, input, expected } of table) {
    await t.step(description, () => {
      const times = new Map(input.changes.map((change, i) => [change.path, input.times[i]!]));
      const sorted = [...input.changes].sort(inChangeOrder((path) => times.get(path) ?? 0));
      assert.deepEqual(sorted.map((change) => change.path), expected);
    });
  }
});

Deno.test("inGivenOrder() keeps the order changes were made in, each after the folders made for it", async (t) => {
  const file = (path: string, origin = "sb"): NewIteration => ({
    path,
    hash: "h",
    size: 1,
    mode: 0o100644,
    deleted: false,
    origin,
  });
  const dir = (path: string): NewIteration => ({ ...file(path), size: 0, mode: 0o40755 });
  const gone = (path: string): NewIteration => ({ ...file(path), mode: 0, deleted: true });
  const table = [
    {
      description: "writes and a removal, out of path order: as given",
      input: {
        order: ["z.txt", "m.txt", "a.txt"],
        changes: [file("a.txt"), gone("m.txt"), file("z.txt")],
      },
      expected: ["z.txt", "m.txt deleted", "a.txt"],
    },
    {
      description: "the folders a write made: before everything, by depth",
      input: {
        order: ["b.txt", "x/y/c.txt"],
        changes: [file("x/y/c.txt"), dir("x/y"), file("b.txt"), dir("x")],
      },
      expected: ["x", "x/y", "b.txt", "x/y/c.txt"],
    },
    {
      description: "what was put where a removal was: right after the removal",
      input: {
        order: ["d", "a.txt"],
        changes: [file("a.txt"), file("d/new.txt", "local"), dir("d"), gone("d")],
      },
      expected: ["d deleted", "d", "d/new.txt", "a.txt"],
    },
  ];
  for (const { description, input, expected } of table) {
    await t.step(description, () => {
      const sorted = [...input.changes].sort(inGivenOrder(input.order));
      const shown = sorted.map((change) => `${change.path}${change.deleted ? " deleted" : ""}`);
      assert.deepEqual(shown, expected);
    });
  }
});

Deno.test("pathsInChangeOrder() sorts paths by modification time, then path", async (t) => {
  const table = [
    { description: "no paths", input: { paths: [], times: [] }, expected: [] },
    {
      description: "earlier time first, whatever the path",
      input: { paths: ["a.txt", "b/c.txt", "d.txt"], times: [30, 10, 20] },
      expected: ["b/c.txt", "d.txt", "a.txt"],
    },
    {
      description: "the same time: in path order",
      input: { paths: ["z.txt", "a/b.txt", "m.txt", "a.txt"], times: [5, 5, 5, 1] },
      expected: ["a.txt", "a/b.txt", "m.txt", "z.txt"],
    },
    {
      description: "a time before 1970 (set, not made by a write): first",
      input: { paths: ["new.txt", "old.txt"], times: [1_700_000_000_000, -86_400_000] },
      expected: ["old.txt", "new.txt"],
    },
  ];
  for (const { description, input, expected } of table) {
    await t.step(description, () => {
      assert.deepEqual(pathsInChangeOrder(input.paths, input.times), expected);
    });
  }
});
