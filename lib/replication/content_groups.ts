/**
 * Splits a batch's changes into groups whose content fetched into memory stays within
 * `budget` bytes, so that a replica keeping no copy of the master's content (see
 * `ReplicaCoreOptions.keepMasterContent`) holds at most a group or two of it at once.
 * The first group also holds every change that fetches nothing (removals, folders, and
 * files whose content came inline), so that the folders a batch creates are made before
 * the files fetched into them. Order is kept within each kind; a group holds at least
 * one change, however large its content.
 *
 * @param items The batch's changes, in order.
 * @param fetchedBytes How many bytes a change's content takes in memory (0: none).
 * @param budget The most bytes of fetched content a group holds (but for a single change).
 * @returns The groups, in the order to make them; none for no changes.
 * @example
 * ```ts
 * import { deepStrictEqual } from "node:assert/strict";
 * import { contentGroups } from "./content_groups.ts";
 * const sizes = { a: 0, b: 6, c: 6, d: 0, e: 20 };
 * const groups = contentGroups(Object.keys(sizes), (k) => sizes[k as keyof typeof sizes], 10);
 * deepStrictEqual(groups, [["a", "d", "b"], ["c"], ["e"]]);
 * ```
 */
export function contentGroups<T>(
  items: readonly T[],
  fetchedBytes: (item: T) => number,
  budget: number,
): T[][] {
  const first: T[] = items.filter((item) => fetchedBytes(item) === 0);
  const groups: T[][] = [first];
  let current = first;
  let held = 0;
  for (const item of items) {
    const bytes = fetchedBytes(item);
    if (bytes === 0) continue;
    if (held > 0 && held + bytes > budget) {
      current = [];
      groups.push(current);
      held = 0;
    }
    current.push(item);
    held += bytes;
  }
  return groups.filter((group) => group.length > 0);
}
