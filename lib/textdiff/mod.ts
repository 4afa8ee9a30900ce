/**
 * Line diffs between two versions of a file, for people and agents: the unified diff
 * `diff -u` prints, its hunks for a side-by-side view, and a plain note for binary
 * content. Pure: bytes in, data out.
 *
 * @example A unified diff
 * ```ts
 * import { strictEqual } from "node:assert/strict";
 * import { unifiedDiff } from "./mod.ts";
 *
 * const bytes = (s: string) => new TextEncoder().encode(s);
 * const diff = unifiedDiff(bytes("v1\n"), bytes("v2\n"), { oldLabel: "a/n", newLabel: "b/n" });
 * strictEqual(diff.added, 1);
 * ```
 *
 * @module
 */
export {
  decodeText,
  type DiffHunk,
  type DiffLine,
  type TextDiff,
  unifiedDiff,
  type UnifiedDiffOptions,
} from "./unified_diff.ts";
