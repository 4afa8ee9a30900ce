/**
 * The order a capture records its changes in, which is the order replicas receive them
 * (PROTOCOL.md §8): deletions deepest first, then creations shallowest first.
 */
import assert from "node:assert/strict";
import { Workspace } from "../../lib/workspace/mod.ts";
import { put, withTempDir } from "../_helpers/temp_dir.ts";

Deno.test("A capture records creations shallowest first and deletions deepest first", async (t) => {
  const cases = [
    {
      description: "a new tree: one depth after the other",
      input: { make: ["a/b/c.txt", "a/z.txt", "y/w/v.txt", "top.txt"], remove: [] },
      expected: ["a", "top.txt", "y", "a/b", "a/z.txt", "y/w", "a/b/c.txt", "y/w/v.txt"],
    },
    {
      description: "a tree removed: the deepest paths first",
      input: { make: ["a/b/c.txt", "a/z.txt", "top.txt"], remove: ["a"] },
      expected: ["a/b/c.txt", "a/z.txt", "a/b", "a"],
    },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () =>
      withTempDir(async (root) => {
        for (const path of input.make) await put(root, path, path);
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
