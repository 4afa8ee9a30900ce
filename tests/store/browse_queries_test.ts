import assert from "node:assert/strict";
import { folderPage, listToDepth, type NewIteration, S_IFDIR, Store } from "../../lib/store/mod.ts";
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

/**
 * What `listToDepth` promises, from the whole listing: every path down to `depth`, the
 * first level's paths themselves, and the first path under each folder at the cut level.
 */
function expectedToDepth(all: string[], dir: string, depth: number): string[] {
  const prefix = dir === "" ? "" : `${dir}/`;
  const base = dir === "" ? 0 : dir.split("/").length;
  const cut = base + Math.max(depth, 1);
  const seen = new Set<string>();
  return all.filter((path) => {
    if (!path.startsWith(prefix)) return false;
    const segments = path.split("/");
    const folder = segments.slice(0, cut).join("/");
    if (segments.length - base <= depth || folder === path) return true;
    if (seen.has(folder)) return false;
    seen.add(folder);
    return true;
  });
}

Deno.test("listToDepth() returns what a cut listing needs, on trees with awkward names", async (t) => {
  // Names around '/' in byte order ('-', '.', '0' and non-ASCII sort on both sides of a
  // folder's children), recorded and implied folders, deleted paths.
  const names = ["a", "a-b", "a.txt", "a0", "b", "é", "z z", "日本"];
  let seed = 7;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  await withTempDir(async (dir) => {
    const store = Store.open(`${dir}/chronicle.db`);
    try {
      const paths = new Set<string>();
      for (let i = 0; i < 400; i++) {
        const levels = 1 + random(4);
        paths.add(Array.from({ length: levels }, () => names[random(names.length)]).join("/"));
      }
      // A path that is also a folder of deeper paths is recorded as a folder.
      const sorted = [...paths].sort();
      const isParent = (path: string) => sorted.some((other) => other.startsWith(`${path}/`));
      store.record(sorted.map((path) => isParent(path) ? folder(path) : file(path)));
      const gone = sorted.filter((_, i) => i % 7 === 3 && !isParent(sorted[i]!));
      store.record(gone.map((path) => ({ ...file(path), deleted: true })));
      const live = (under: string) =>
        store.list(under === "" ? {} : { dir: under }).map((i) => i.path).filter((p) =>
          p !== under
        );
      for (const under of ["", "a", "a/a-b", "é", "日本/z z", "missing"]) {
        for (const depth of [0, 1, 2, 3, 9]) {
          await t.step(`"${under}" to depth ${depth}`, () => {
            const got = listToDepth(store, under, depth).map((i) => i.path);
            assert.deepEqual(got, expectedToDepth(live(under), under, depth));
          });
        }
      }
    } finally {
      store.close();
    }
  });
});
