import { log } from "../log/mod.ts";
import type { Unrecorded } from "./recordable.ts";

/** Paths whose problem is remembered at most: beyond, the oldest are logged again. */
const REMEMBERED = 10_000;

/**
 * Logs each path that is not recorded once (`not recorded`, with the reason), not at every
 * scan or event that finds it again: a path that stays unrecordable (a name with a
 * backslash, a named pipe) would otherwise be logged at every safety rescan. A path is
 * logged again when its reason changes, or after a whole scan no longer found it (it was
 * fixed or removed), should it come back.
 */
export class ProblemLog {
  /** Reason logged, by path, oldest first. */
  readonly #logged = new Map<string, string>();

  /**
   * Logs the problems not logged before with the same reason.
   *
   * @param problems Paths not recorded, with the reason.
   */
  report(problems: Iterable<Unrecorded>): void {
    for (const problem of problems) {
      if (this.#logged.get(problem.path) === problem.reason) continue;
      this.#logged.delete(problem.path); // re-added last: the newest
      this.#logged.set(problem.path, problem.reason);
      log("warn", "not recorded", { path: problem.path, reason: problem.reason });
      if (this.#logged.size > REMEMBERED) {
        this.#logged.delete(this.#logged.keys().next().value!);
      }
    }
  }

  /**
   * After a walk of the whole tree: forgets the paths it did not find unrecordable, then
   * logs what it found as {@linkcode ProblemLog.report} does.
   *
   * @param skipped Every path the walk could not record.
   */
  afterWholeWalk(skipped: readonly Unrecorded[]): void {
    const found = new Set(skipped.map((problem) => problem.path));
    for (const path of [...this.#logged.keys()]) if (!found.has(path)) this.#logged.delete(path);
    this.report(skipped);
  }
}
