import assert from "node:assert/strict";
import { ancestorsOf, PathSet } from "../../lib/paths/mod.ts";

const MEMBERS = ["a/b/c.txt", "docs", "x"];

const CASES: Array<{ path: string; covers: boolean; overlaps: boolean }> = [
  { path: "a/b/c.txt", covers: true, overlaps: true },
  { path: "a/b", covers: false, overlaps: true }, // holds a member
  { path: "a", covers: false, overlaps: true },
  { path: "a/b/d.txt", covers: false, overlaps: false }, // a sibling
  { path: "a/b/c.txt/deeper", covers: true, overlaps: true },
  { path: "docs/readme.md", covers: true, overlaps: true },
  { path: "docs2", covers: false, overlaps: false }, // a shared prefix is not a folder
  { path: "do", covers: false, overlaps: false },
  { path: "x/y/z", covers: true, overlaps: true },
  { path: "y", covers: false, overlaps: false },
  { path: "", covers: false, overlaps: true }, // the root holds everything
];

for (const { path, covers, overlaps } of CASES) {
  Deno.test(`PathSet: "${path}" covered ${covers}, overlapping ${overlaps}`, () => {
    const set = new PathSet();
    for (const member of MEMBERS) set.add(member);
    assert.equal(set.covers(path), covers);
    assert.equal(set.overlaps(path), overlaps);
  });
}

Deno.test("PathSet: the root as a member covers every path", () => {
  const set = new PathSet();
  set.add("");
  assert.equal(set.covers("any/thing"), true);
  assert.equal(set.overlaps("any"), true);
});

Deno.test("PathSet: an empty set overlaps nothing, not even the root", () => {
  const set = new PathSet();
  assert.equal(set.overlaps(""), false);
  assert.equal(set.covers("a"), false);
  assert.equal(set.size, 0);
});

Deno.test("PathSet: members are kept once, in the order added", () => {
  const set = new PathSet();
  for (const path of ["b", "a/c", "b", "a/d"]) set.add(path);
  assert.deepEqual(set.paths, ["b", "a/c", "a/d"]);
  assert.equal(set.size, 3);
});

Deno.test("ancestorsOf lists the folders holding a path, innermost first", () => {
  assert.deepEqual(ancestorsOf("a/b/c.txt"), ["a/b", "a"]);
  assert.deepEqual(ancestorsOf("top.txt"), []);
  assert.deepEqual(ancestorsOf(""), []);
});
