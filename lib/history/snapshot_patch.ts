import { join } from "node:path";
import { type Cas, sha256Hex } from "../cas/mod.ts";
import { lstatOrNull } from "../disk/mod.ts";
import type { FileChange } from "../snapshot/mod.ts";
import { type DiffHunk, unifiedDiff } from "../textdiff/mod.ts";
import { HistoryError } from "./errors.ts";
import { hunkToJson, MAX_DIFF_BYTES, readForDiff, tooLarge } from "./iteration_diff.ts";

/** The content patch of one file a snapshot captured. */
export interface FilePatch {
  /** The workspace path. */
  path: string;
  /** `created`, `modified` or `deleted` since the snapshot. */
  change: FileChange["change"];
  /** Either side is not text: no hunks. */
  binary: boolean;
  /** Both sides hold the same bytes (a mode change only). */
  identical: boolean;
  /** Lines added. */
  added: number;
  /** Lines removed. */
  removed: number;
  /** The hunks, for a side-by-side view. */
  hunks: DiffHunk[];
  /** Why no line diff is shown (a link, too large, changed again meanwhile), if so. */
  note: string | null;
  /** The unified diff (`--- a/PATH` the snapshot, `+++ b/PATH` now), or `""`. */
  text: string;
}

/**
 * Line diffs of the files a snapshot diff found changed: the snapshot's captured content
 * (from the CAS) against the file on disk now. Folders are skipped; links, content over
 * `MAX_DIFF_BYTES`, and a file whose bytes no longer have the hash the diff saw (changed
 * again since) get a note instead of hunks. Only the regular file at the exact path is
 * read, and only if it still has that hash, so nothing beyond a link is ever shown.
 *
 * @param root The workspace root.
 * @param cas Where captured content lives.
 * @param changes The snapshot diff's changes.
 * @returns One patch per changed file or link, in the changes' order.
 */
export async function snapshotPatches(
  root: string,
  cas: Cas,
  changes: readonly FileChange[],
): Promise<FilePatch[]> {
  const patches: FilePatch[] = [];
  for (const change of changes) {
    if (change.kind === "dir") continue;
    const base = { path: change.path, change: change.change };
    if (change.kind === "symlink") {
      patches.push(noted(base, "a symbolic link: its target changed"));
      continue;
    }
    try {
      const before = await readForDiff(cas, change.beforeHash, `"${change.path}" as captured`);
      const after = await readNow(root, change.path, change.afterHash);
      if (after === undefined) {
        patches.push(noted(base, "changed again since the diff was computed"));
        continue;
      }
      const diff = unifiedDiff(before, after, {
        oldLabel: change.beforeHash === null ? "/dev/null" : `a/${change.path}`,
        newLabel: change.afterHash === null ? "/dev/null" : `b/${change.path}`,
      });
      patches.push({ ...base, ...diff, note: null });
    } catch (error) {
      if (!(error instanceof HistoryError)) throw error;
      patches.push(noted(base, error.message));
    }
  }
  return patches;
}

/**
 * A patch as JSON (`chronicle diff ID --patch --json`): `path`, `change`, `binary`,
 * `identical`, `added`, `removed`, `hunks` (snake_case, as for iteration diffs), `note`
 * and `text`.
 *
 * @param patch The patch.
 * @returns Its JSON form.
 */
export function filePatchToJson(patch: FilePatch): Record<string, unknown> {
  return { ...patch, hunks: patch.hunks.map(hunkToJson) };
}

/** The file at `path` now, if it still has `hash` (`null`: nothing there). */
async function readNow(
  root: string,
  path: string,
  hash: string | null,
): Promise<Uint8Array | undefined> {
  if (hash === null) return new Uint8Array();
  const absolute = join(root, path);
  const info = await lstatOrNull(absolute);
  if (!info?.isFile) return undefined;
  if (info.size > MAX_DIFF_BYTES) throw tooLarge(`"${path}" as it is now`, info.size);
  // RACE: a parent replaced by a link since the diff would be followed here; the bytes
  // are shown only if they hash to what the diff saw at the path itself.
  const bytes = await Deno.readFile(absolute);
  return sha256Hex(bytes) === hash ? bytes : undefined;
}

function noted(base: Pick<FilePatch, "path" | "change">, note: string): FilePatch {
  return {
    ...base,
    binary: false,
    identical: false,
    added: 0,
    removed: 0,
    hunks: [],
    note,
    text: "",
  };
}
