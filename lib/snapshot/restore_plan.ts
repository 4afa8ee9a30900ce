import { isInside } from "../paths/mod.ts";
import type { Iteration } from "../store/mod.ts";
import { comparePaths } from "./canonical_encoding.ts";
import type { RestoreChange, RestorePlan } from "./types.ts";

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
