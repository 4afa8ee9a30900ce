/**
 * How deep a workspace path is: `a` is 1, `a/b` is 2.
 *
 * @param path A normalized workspace path.
 * @returns Its number of segments.
 */
export function pathDepth(path: string): number {
  return path.split("/").length;
}

/**
 * `items` grouped by level, the groups ordered by level, each group keeping the items'
 * order. Paths of one level of a tree's creations or removals are unrelated to each
 * other, so each group can be applied as one batch (PROTOCOL.md §8).
 *
 * @param items What to group.
 * @param levelOf An item's level (`Infinity` sorts after every depth).
 * @param order `shallowest` for creations (a folder before what it holds), `deepest` for
 * removals (what a folder holds before it).
 * @returns The groups; none for no items.
 *
 * @example
 * ```ts
 * import { deepStrictEqual } from "node:assert/strict";
 * import { byLevel, pathDepth } from "./_path_levels.ts";
 * deepStrictEqual(byLevel(["a/b", "c", "a"], pathDepth, "deepest"), [["a/b"], ["c", "a"]]);
 * ```
 */
export function byLevel<T>(
  items: readonly T[],
  levelOf: (item: T) => number,
  order: "shallowest" | "deepest",
): T[][] {
  const groups = new Map<number, T[]>();
  for (const item of items) {
    const level = levelOf(item);
    const group = groups.get(level);
    if (group) group.push(item);
    else groups.set(level, [item]);
  }
  const levels = [...groups.keys()].sort((a, b) => order === "shallowest" ? a - b : b - a);
  return levels.map((level) => groups.get(level)!);
}
