import { Pacer } from "../concurrency/mod.ts";
import { isMissing } from "../disk/mod.ts";
import type { PathFilter } from "../filter/mod.ts";
import { type Observation, observePath } from "./file_observation.ts";
import type { SeenFile } from "./plan_capture.ts";
import {
  INVALID_UTF8_REASON,
  lostInDecoding,
  recordablePath,
  specialFileReason,
  type Unrecorded,
} from "./recordable.ts";

/**
 * Entries looked at between two yields to the event loop, at most. The walk's calls are
 * synchronous (see `observePath`); yielding now and then keeps timers and sockets served
 * while a large tree is walked. The yield is a zero-delay timer, which on Deno 2.9 fires
 * 1 to 2.6 ms later, and that pause is wanted: live work (a change to replicate, with its
 * many awaits) runs while the walk waits. A yield through `setImmediate` made restarting a
 * master on 100,000 recorded files 0.4 to 0.7 s faster, but a write made right after a
 * replica's initial sync reached it in 360 to 580 ms instead of 6 to 9 ms, behind the
 * scan that follows the catch-up: each await of that write waited for 500 more entries.
 */
const ENTRIES_PER_YIELD = 500;

/**
 * Time a walk runs between two yields, at most, ms, counting what its consumer does with
 * the entries it yields (a scan's comparisons with the store). 500 entries take a few ms
 * on a quiet disk, but a look at a file waits on a busy one: a master's periodic rescan,
 * while a replica wrote a large initial sync to the same disk, held the master's event
 * loop 200 to 320 ms at a time, and the replica waited that long for its answers.
 */
const MS_PER_YIELD = 10;

/**
 * Lists every file, link and folder under `start` (a normalized relative folder, `""` for
 * the root; `start` itself is not listed), skipping filtered paths and never descending
 * through links.
 *
 * @returns The files found, paths that could not be recorded (with the reason), and the
 * named pipes found.
 */
export async function walkTree(
  root: string,
  start: string,
  filter: PathFilter,
): Promise<{ files: SeenFile[]; skipped: Unrecorded[]; pipes: string[] }> {
  const files: SeenFile[] = [];
  const skipped: Unrecorded[] = [];
  const pipes: string[] = [];
  const folders = [start];
  const pace = new Pacer({ ms: MS_PER_YIELD, count: ENTRIES_PER_YIELD });
  while (folders.length > 0) {
    const folder = folders.pop()!;
    for (const name of readNames(folder === "" ? root : `${root}/${folder}`)) {
      const observation = lookAt(root, folder, name, filter, skipped, pipes);
      if (observation !== null) {
        files.push(observation);
        if (observation.kind === "dir") folders.push(observation.path);
      }
      await pace.tick();
    }
  }
  return { files, skipped, pipes };
}

/**
 * Looks at `name` in `folder` (by `lstat` only: nothing is ever opened here), and returns
 * it when a walk lists it: a file, link or folder the filter lets through. What cannot be
 * recorded is noted in `skipped` with the reason (a path `recordablePath` refuses, a name
 * that is not UTF-8, a special file the filter lets through), and a named pipe in `pipes`.
 */
function lookAt(
  root: string,
  folder: string,
  name: string,
  filter: PathFilter,
  skipped: Unrecorded[],
  pipes: string[],
): SeenFile | null {
  const path = recordablePath(folder === "" ? name : `${folder}/${name}`, skipped);
  if (path === null) return null;
  const observation: Observation = observePath(root, path);
  switch (observation.kind) {
    case "dir":
      return filter.ignores(path, true) ? null : observation;
    case "file":
    case "symlink":
      return filter.ignores(path, false) ? null : observation;
    case "other":
      if (observation.pipe) pipes.push(path);
      if (!filter.ignores(path, false)) {
        skipped.push({ path, reason: specialFileReason(observation.what) });
      }
      return null;
    case "absent":
      // Listed, then not found by that name: gone since (RACE: its event follows), or a
      // name that is not UTF-8, which no look by name can ever find.
      if (lostInDecoding(name)) skipped.push({ path, reason: INVALID_UTF8_REASON });
      return null;
  }
}

/** A code unit from the surrogates up, where UTF-16's order and code points' can differ. */
const FROM_SURROGATES = /[\uD800-\uFFFF]/;

/**
 * Orders two strings by code point, which is the order of their UTF-8 bytes: SQLite's
 * order of text (`ORDER BY` with its default collation). JavaScript's `<` compares UTF-16
 * code units, which differs where a character above U+FFFF (a surrogate pair) meets one
 * from U+E000 to U+FFFF.
 *
 * @returns Negative, zero or positive, as `a` sorts before, with or after `b`.
 * @example
 * ```ts
 * compareCodePoints("\u{1F600}", "\uFFFD") > 0; // true, though "\u{1F600}" < "\uFFFD"
 * ```
 */
export function compareCodePoints(a: string, b: string): number {
  // The orders differ only where both strings hold a code unit from U+D800 up: otherwise
  // JavaScript's own comparison, much faster than a loop here, gives the same answer.
  if (!FROM_SURROGATES.test(a) || !FROM_SURROGATES.test(b)) return a < b ? -1 : a > b ? 1 : 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // A surrogate stands for a code point above U+FFFF: after every other code unit.
    const xSurrogate = x >= 0xd800 && x <= 0xdfff;
    const ySurrogate = y >= 0xd800 && y <= 0xdfff;
    if (xSurrogate !== ySurrogate) return xSurrogate ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

/**
 * Every file, link and folder under `root` (the root itself is not listed), as
 * {@linkcode walkTree} finds them, one at a time and sorted by path as SQLite sorts text
 * ({@linkcode compareCodePoints}): a scan compares them with the store's records, read in
 * the same order a page at a time, without holding either side whole. Only the folders on
 * the way down to the current one are held.
 *
 * A folder's own entry comes in its place among its siblings' names; what it holds comes
 * where the name followed by `/` sorts: `a`, `a.txt`, `a/x`, `a0` (`.` sorts before `/`).
 *
 * @param skipped Receives the paths that cannot be recorded (with the reason).
 * @param pipes Receives the named pipes found (see `PipeHolder`).
 */
export async function* walkTreeSorted(
  root: string,
  filter: PathFilter,
  skipped: Unrecorded[],
  pipes: string[] = [],
): AsyncGenerator<SeenFile> {
  const pace = new Pacer({ ms: MS_PER_YIELD, count: ENTRIES_PER_YIELD });
  async function* folder(path: string): AsyncGenerator<SeenFile> {
    const entries: Array<{ key: string; seen: SeenFile; inside: boolean }> = [];
    for (const name of readNames(path === "" ? root : `${root}/${path}`)) {
      const seen = lookAt(root, path, name, filter, skipped, pipes);
      if (seen !== null) {
        const key = path === "" ? seen.path : seen.path.slice(path.length + 1);
        entries.push({ key, seen, inside: false });
        if (seen.kind === "dir") entries.push({ key: `${key}/`, seen, inside: true });
      }
      await pace.tick();
    }
    entries.sort((a, b) => compareCodePoints(a.key, b.key));
    for (const entry of entries) {
      if (entry.inside) yield* folder(entry.seen.path);
      else {
        yield entry.seen;
        // The entry was counted when looked at; its consumer's work on it counts in time.
        await pace.tick(false);
      }
    }
  }
  yield* folder("");
}

/** The names in a folder; none when it is gone. */
function readNames(folder: string): string[] {
  const names: string[] = [];
  try {
    for (const entry of Deno.readDirSync(folder)) names.push(entry.name);
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
  return names;
}
