/**
 * The order a capture records its changes in, which is the order replicas receive them
 * (PROTOCOL.md §8). Pure.
 *
 * @module
 */

import { ancestorsOf } from "../paths/mod.ts";
import { isFolderMode, type NewIteration } from "../store/mod.ts";

/**
 * Deletions before creations; deletions deepest first, creations shallowest first. By
 * depth rather than by path: consecutive paths of one depth are never related, so a
 * replica applies a level of a new tree in one batch, not one batch per folder.
 *
 * @param a One change.
 * @param b Another.
 * @returns Negative when `a` comes first.
 */
export function byDepthThenPath(a: NewIteration, b: NewIteration): number {
  if (a.deleted !== b.deleted) return Number(b.deleted) - Number(a.deleted);
  const order = depthOf(a.path) - depthOf(b.path) || comparePaths(a.path, b.path);
  return a.deleted ? -order : order;
}

/**
 * Paths in the order they were changed: earlier modification time first, then path order
 * (the order {@linkcode inChangeOrder} gives files). For the files of a whole tree (a scan
 * covering lost events: 100,000 files on a large tree) without an object per
 * file: only an index is sorted.
 *
 * @param paths The paths.
 * @param times Each path's modification time (epoch ms), at the same index.
 * @returns The paths in that order.
 * @example
 * ```ts
 * pathsInChangeOrder(["a.txt", "b.txt", "c.txt"], [2, 1, 2]); // ["b.txt", "a.txt", "c.txt"]
 * ```
 */
export function pathsInChangeOrder(
  paths: readonly string[],
  times: readonly number[],
): string[] {
  const order = Array.from(paths.keys());
  order.sort((a, b) => times[a]! - times[b]! || comparePaths(paths[a]!, paths[b]!));
  return order.map((index) => paths[index]!);
}

/** Path order, as JavaScript compares strings. */
function comparePaths(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The order of what is found on disk (a watcher's batch, a scan's slice), whose order is
 * not otherwise known: deletions first (deepest first), then folders (shallowest first),
 * then files and links in the order they were changed, by modification time, then path.
 * A folder's modification time is its last entry's change, not its making: it comes
 * before what goes in it, whenever that was made. Files are never inside each other, so a
 * replica still applies them in one batch.
 *
 * @param mtimeOf A file's modification time (epoch ms), by path.
 * @returns The comparison, for `Array.prototype.sort`.
 * @example
 * ```ts
 * const file = (path: string) => ({ path, hash: "", size: 0, mode: 0o100644, deleted: false });
 * const times = new Map([["b.txt", 1], ["a.txt", 2]]);
 * const changes = [file("a.txt"), file("b.txt")];
 * changes.sort(inChangeOrder((path) => times.get(path) ?? 0)); // b.txt, then a.txt
 * ```
 */
export function inChangeOrder(
  mtimeOf: (path: string) => number,
): (a: NewIteration, b: NewIteration) => number {
  const group = (change: NewIteration) => change.deleted ? 0 : isFolderMode(change.mode) ? 1 : 2;
  return (a, b) => {
    const groups = group(a) - group(b);
    if (groups !== 0 || group(a) !== 2) return groups || byDepthThenPath(a, b);
    return mtimeOf(a.path) - mtimeOf(b.path) || comparePaths(a.path, b.path);
  };
}

/**
 * The order of changes made in a given order (a sandbox's write-backs, as it made them):
 * the paths of `order` in that order, each with what was found at or inside it (a removal,
 * then what was put there since, by {@linkcode byDepthThenPath}); first, the folders made
 * for them (by depth). The paths of `order` are unrelated (none inside another).
 *
 * @param order The paths of the changes, in the order made.
 * @returns The comparison, for `Array.prototype.sort`.
 * @example
 * ```ts
 * const file = (path: string) => ({ path, hash: "", size: 0, mode: 0o100644, deleted: false });
 * const changes = [file("a/c.txt"), file("b.txt"), { ...file("a"), mode: 0o40755 }];
 * changes.sort(inGivenOrder(["b.txt", "a/c.txt"])); // a (made for a/c.txt), b.txt, a/c.txt
 * ```
 */
export function inGivenOrder(
  order: readonly string[],
): (a: NewIteration, b: NewIteration) => number {
  const rank = new Map(order.map((path, i) => [path, i]));
  const keys = new Map<string, number>();
  // A path's own rank, else its ranked ancestor's (at most one: they are unrelated), else
  // -1: a folder made for them, before all.
  const keyOf = (path: string): number => {
    let key = keys.get(path);
    if (key === undefined) {
      key = rank.get(path) ??
        ancestorsOf(path).map((ancestor) => rank.get(ancestor)).find((r) => r !== undefined) ??
        -1;
      keys.set(path, key);
    }
    return key;
  };
  return (a, b) => keyOf(a.path) - keyOf(b.path) || byDepthThenPath(a, b);
}

/** How many folders hold a normalized path (0 for the root's children). */
function depthOf(path: string): number {
  let depth = 0;
  for (let at = path.indexOf("/"); at !== -1; at = path.indexOf("/", at + 1)) depth++;
  return depth;
}
