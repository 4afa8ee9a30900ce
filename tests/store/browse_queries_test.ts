import assert from "node:assert/strict";
import { folderPage, type NewIteration, S_IFDIR, Store } from "../../lib/store/mod.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

const EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

const file = (path: string): NewIteration => ({
  path,
  hash: "1".repeat(64),
  size: 1,
  mode: 0o100644,
  deleted: false,
});
const folder = (path: string): NewIteration => ({
  path,
  hash: EMPTY,
  size: 0,
  mode: S_IFDIR | 0o755,
  deleted: false,
});

/** Every entry of `dir`, walked `limit` entries a page. */
function walk(store: Store, dir: string, limit: number): string[] {
  const seen: string[] = [];
  let cursor = "";
  for (let pages = 0; pages < 100; pages++) {
    const page = folderPage(store, dir, { cursor, limit });
    seen.push(...page.entries.map((entry) => `${entry.type}:${entry.path}`));
    if (page.next === null) return seen;
    cursor = page.next;
  }
  throw new Error("folderPage() never ended");
}

Deno.test("folderPage() lists a recorded folder once, as a folder, whatever the page size", async (t) => {
  await withTempDir(async (dir) => {
    const store = Store.open(`${dir}/chronicle.db`);
    try {
      store.record([
        folder("a"),
        file("a!"), // sorts between the folder and its children
        file("a.txt"),
        file("a/x.txt"),
        folder("a/deep"),
        file("a/deep/y.txt"),
        folder("empty"), // recorded, nothing inside
        file("implied/z.txt"), // a folder known only from a deeper path
        file("top.txt"),
      ]);
      const expected = [
        "dir:a",
        "file:a!",
        "file:a.txt",
        "dir:empty",
        "dir:implied",
        "file:top.txt",
      ];
      for (const limit of [1, 2, 3, 200]) {
        await t.step(
          `root, ${limit} a page`,
          () => assert.deepEqual(walk(store, "", limit), expected),
        );
      }
      await t.step(
        "inside a",
        () => assert.deepEqual(walk(store, "a", 1), ["dir:a/deep", "file:a/x.txt"]),
      );
      await t.step("an empty folder", () => assert.deepEqual(walk(store, "empty", 5), []));
    } finally {
      store.close();
    }
  });
});
