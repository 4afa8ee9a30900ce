import { isInside } from "../paths/mod.ts";
import { type Iteration, S_IFLNK, S_IFMT } from "../store/mod.ts";
import type { CaptureTarget } from "./affected_paths.ts";
import { comparePaths } from "./canonical_encoding.ts";
import type { ApplyStep, RestoreChange, RestorePlan } from "./types.ts";

/** Input of {@linkcode planRestore}. */
export interface RestoreInput {
  /** The store sequence to go back to. */
  sequence: number;
  /** The live tree at that sequence (`Store.list({ atSequence })`). */
  then: readonly Iteration[];
  /** The live tree now (`Store.list()`). */
  now: readonly Iteration[];
  /** Only these paths and what lies beneath them; everything when empty or absent. */
  paths?: readonly string[] | undefined;
}

/**
 * Decides what a point-in-time restore changes: every path whose content or mode differs
 * is written back, every path that did not exist then is removed. Pure.
 *
 * @param input The trees then and now, and the paths to restore.
 * @returns The plan, its changes sorted by path.
 *
 * @example A file created after the moment is removed
 * ```ts
 * import { planRestore } from "./restore_plan.ts";
 * const file = {
 *   path: "new.txt", iteration: 1, sequence: 7, timestamp: 0, size: 1, hash: "ab".repeat(32),
 *   mode: 0o100644, deleted: false, origin: "local",
 * };
 * const plan = planRestore({ sequence: 6, then: [], now: [file] });
 * if (plan.changes[0]?.action !== "remove") throw new Error("not removed");
 * ```
 */
export function planRestore(input: RestoreInput): RestorePlan {
  const paths = input.paths ?? [];
  const wanted = (path: string) => paths.length === 0 || paths.some((p) => isInside(path, p));
  const then = new Map(
    input.then.filter((i) => !i.deleted && wanted(i.path)).map((i) => [i.path, i]),
  );
  const now = new Map(
    input.now.filter((i) => !i.deleted && wanted(i.path)).map((i) => [i.path, i]),
  );
  const changes: RestoreChange[] = [];
  for (const path of [...new Set([...then.keys(), ...now.keys()])].sort(comparePaths)) {
    const before = now.get(path);
    const after = then.get(path);
    if (before && after && before.hash === after.hash && before.mode === after.mode) continue;
    changes.push({
      path,
      action: after ? "write" : "remove",
      before: before ? { hash: before.hash, size: before.size, mode: before.mode } : null,
      after: after ? { hash: after.hash, size: after.size, mode: after.mode } : null,
    });
  }
  return { sequence: input.sequence, changes };
}

/**
 * The step that carries out one change of a point-in-time restore: a removal, or a write
 * of the old content as a file or a link (by the type bits of its mode). Pure.
 *
 * @param change One change of a {@linkcode planRestore} plan.
 * @returns The step for `applySteps`.
 */
export function restoreStep(change: RestoreChange): ApplyStep {
  if (!change.after) return { op: "remove", path: change.path, kind: "file" };
  const { hash, size, mode } = change.after;
  const kind = (mode & S_IFMT) === S_IFLNK ? "symlink" : "file";
  return { op: "write", path: change.path, kind, hash, size, mode };
}

/**
 * What to capture before a restore: every path it changes, recorded as a file when
 * absent (the iteration store holds files and links only). Pure.
 *
 * @param plan The restore plan.
 * @returns The capture targets, in the plan's order.
 */
export function restoreTargets(plan: RestorePlan): CaptureTarget[] {
  return plan.changes.map((change) => ({ path: change.path, absentKind: "file" }));
}
