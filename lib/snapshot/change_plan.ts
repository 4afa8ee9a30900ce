import { ancestorsOf, isInside } from "../paths/mod.ts";
import { comparePaths, sortFiles } from "./canonical_encoding.ts";
import type { CaptureTarget } from "./affected_paths.ts";
import type { ApplyStep, CapturedFile, FileChange } from "./types.ts";

/**
 * The top-level paths of a capture: entries with no ancestor among the entries. Capturing
 * these again gives the current state of everything the capture covers. Pure.
 *
 * @param files Captured entries (present or absent).
 * @returns The roots, sorted.
 *
 * @example
 * ```ts
 * import { rootsOf } from "./change_plan.ts";
 * const file = { state: "present", kind: "dir", hash: "", size: 0, mode: 0o40755 } as const;
 * const roots = rootsOf([{ ...file, path: "a" }, { ...file, path: "a/b" }, { ...file, path: "c" }]);
 * if (roots.join() !== "a,c") throw new Error(roots.join());
 * ```
 */
export function rootsOf(files: readonly CapturedFile[]): string[] {
  const paths = new Set(files.map((file) => file.path));
  const roots = [...paths].filter((path) =>
    !ancestorsOf(path).some((ancestor) => paths.has(ancestor))
  );
  return roots.sort(comparePaths);
}

/**
 * What to capture to get the current state of everything `files` covers: their roots
 * ({@linkcode rootsOf}), each recorded as a folder when absent if it was a folder in
 * `files`, else as a file. Pure.
 *
 * @param files Captured entries (present or absent).
 * @returns The capture targets, sorted by path.
 */
export function rootTargets(files: readonly CapturedFile[]): CaptureTarget[] {
  const kinds = new Map(files.map((file) => [file.path, file.kind]));
  return rootsOf(files).map((path) => ({
    path,
    absentKind: kinds.get(path) === "dir" ? "dir" : "file",
  }));
}

/**
 * Whether an entry has content in the CAS: a present file or link (a folder or an absent
 * path has none). Pure.
 *
 * @param file A captured entry.
 * @returns True when rolling back to it needs its content.
 */
export function needsContent(file: CapturedFile): boolean {
  return file.state === "present" && file.kind !== "dir";
}

/**
 * The changes from `before` (a snapshot) to `after` (the same roots captured now). A path
 * missing from a capture, or captured `absent`, did not exist. Pure.
 *
 * @param before The snapshot's entries.
 * @param after The current entries of the same roots.
 * @returns `created`, `modified` and `deleted` paths, sorted by path.
 */
export function diffFiles(
  before: readonly CapturedFile[],
  after: readonly CapturedFile[],
): FileChange[] {
  const then = presentByPath(before);
  const now = presentByPath(after);
  const paths = [...new Set([...then.keys(), ...now.keys()])].sort(comparePaths);
  const changes: FileChange[] = [];
  for (const path of paths) {
    const b = then.get(path);
    const a = now.get(path);
    if (b && a && b.kind === a.kind && b.hash === a.hash && b.mode === a.mode) continue;
    const change = !b ? "created" : !a ? "deleted" : "modified";
    changes.push({
      path,
      change,
      kind: (a ?? b)!.kind,
      beforeHash: b ? b.hash : null,
      afterHash: a ? a.hash : null,
      beforeSize: b ? b.size : null,
      afterSize: a ? a.size : null,
      beforeMode: b ? b.mode : null,
      afterMode: a ? a.mode : null,
    });
  }
  return changes;
}

/**
 * The steps that turn `current` into `desired` (both captures of the same roots). Pure.
 *
 * Order: removals deepest first (files and links, then the folders they emptied); folders
 * created shallowest first; files and links written; folder modes set deepest first last,
 * so a read-only folder is filled before it is locked.
 *
 * @param desired The state to bring back (a snapshot's entries).
 * @param current The state now.
 * @returns The steps, in the order to apply them.
 */
export function planRollback(
  desired: readonly CapturedFile[],
  current: readonly CapturedFile[],
): ApplyStep[] {
  const want = presentByPath(desired);
  const have = presentByPath(current);
  const removes: ApplyStep[] = [];
  const mkdirs: ApplyStep[] = [];
  const writes: ApplyStep[] = [];
  const chmods: ApplyStep[] = [];
  for (const [path, c] of have) {
    const d = want.get(path);
    if (!d || (d.kind === "dir") !== (c.kind === "dir")) {
      removes.push({ op: "remove", path, kind: c.kind });
    }
  }
  for (const [path, d] of want) {
    const c = have.get(path);
    if (d.kind === "dir") {
      const fresh = !c || c.kind !== "dir";
      if (fresh) mkdirs.push({ op: "mkdir", path });
      if (fresh || c.mode !== d.mode) chmods.push({ op: "chmod", path, mode: d.mode });
    } else if (!c || c.kind !== d.kind || c.hash !== d.hash || c.mode !== d.mode) {
      writes.push({ op: "write", path, kind: d.kind, hash: d.hash, size: d.size, mode: d.mode });
    }
  }
  const deepestFirst = (a: ApplyStep, b: ApplyStep) =>
    depth(b.path) - depth(a.path) || comparePaths(a.path, b.path);
  const shallowestFirst = (a: ApplyStep, b: ApplyStep) =>
    depth(a.path) - depth(b.path) || comparePaths(a.path, b.path);
  return [
    ...removes.sort(deepestFirst),
    ...mkdirs.sort(shallowestFirst),
    ...writes.sort((a, b) => comparePaths(a.path, b.path)),
    ...chmods.sort(deepestFirst),
  ];
}

/**
 * Combines snapshots into the one state that undoing them newest first would leave: each
 * path takes its state from the oldest snapshot that covers it. Pure.
 *
 * @param newestFirst Each snapshot's entries, the newest snapshot first.
 * @returns The combined entries, sorted by path.
 */
export function mergeForUndo(newestFirst: readonly (readonly CapturedFile[])[]): CapturedFile[] {
  const merged = new Map<string, CapturedFile>();
  for (const files of newestFirst) {
    for (const root of rootsOf(files)) {
      for (const path of [...merged.keys()]) {
        if (isInside(path, root)) merged.delete(path);
      }
    }
    for (const file of files) merged.set(file.path, file);
  }
  return sortFiles([...merged.values()]);
}

function presentByPath(files: readonly CapturedFile[]): Map<string, CapturedFile> {
  const map = new Map<string, CapturedFile>();
  for (const file of files) if (file.state === "present") map.set(file.path, file);
  return map;
}

function depth(path: string): number {
  let count = 0;
  for (const char of path) if (char === "/") count++;
  return count;
}
