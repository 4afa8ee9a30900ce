/**
 * Questions about a workspace's history that need content: the line diff between two
 * iterations of a path (CLI `diff PATH --from N`, REST `GET /files/{path}/diff`), and the
 * content patches of what changed since a snapshot (`diff ID --patch`). Reads verified
 * content from the CAS; bounded by {@linkcode MAX_DIFF_BYTES}.
 *
 * @example Two iterations of a file
 * ```ts
 * import { Cas } from "../cas/mod.ts";
 * import { Store } from "../store/mod.ts";
 * import { diffIterations } from "./mod.ts";
 *
 * const dir = await Deno.makeTempDir();
 * const store = Store.open(`${dir}/chronicle.db`);
 * try {
 *   const cas = await Cas.open(`${dir}/cas`, { db: store.db });
 *   for (const text of ["v1\n", "v2\n"]) {
 *     const { hash, size } = await cas.putBytes(new TextEncoder().encode(text));
 *     store.record([{ path: "notes.md", hash, size, mode: 0o100644, deleted: false }]);
 *   }
 *   const diff = await diffIterations(store, cas, "notes.md", { from: 1 });
 *   if (diff.added !== 1 || diff.removed !== 1) throw new Error("expected one line changed");
 * } finally {
 *   store.close();
 *   await Deno.remove(dir, { recursive: true });
 * }
 * ```
 *
 * @module
 */
export type { DiffHunk, DiffLine, TextDiff } from "../textdiff/mod.ts";
export { HistoryError, type HistoryErrorCode } from "./errors.ts";
export {
  type ContentSide,
  diffContents,
  diffIterations,
  type DiffSide,
  hunkToJson,
  type IterationDiff,
  type IterationDiffOptions,
  iterationDiffText,
  iterationDiffToJson,
  MAX_DIFF_BYTES,
} from "./iteration_diff.ts";
export { type FilePatch, filePatchToJson, snapshotPatches } from "./snapshot_patch.ts";
