/**
 * The work under way for `key` in `pending`, or `start()`ed and kept there until it
 * settles: concurrent calls for one key share it, and each sees its outcome.
 *
 * @param pending Work under way, by key (the caller's, one map per kind of work).
 * @param key What the work is for.
 * @param start Starts the work when none is under way for `key`.
 * @returns The shared work.
 *
 * @example Two reads of one key share one start
 * ```ts
 * import { sharedWork } from "./shared_work.ts";
 * const pending = new Map<string, Promise<number>>();
 * let starts = 0;
 * const read = () => sharedWork(pending, "a", () => Promise.resolve(++starts));
 * const [x, y] = await Promise.all([read(), read()]);
 * if (x !== 1 || y !== 1 || starts !== 1) throw new Error("not shared");
 * ```
 */
export function sharedWork<T>(
  pending: Map<string, Promise<T>>,
  key: string,
  start: () => Promise<T>,
): Promise<T> {
  let work = pending.get(key);
  if (!work) {
    work = start().finally(() => pending.delete(key));
    work.catch(() => {}); // each caller awaits it and sees its failure
    pending.set(key, work);
  }
  return work;
}
