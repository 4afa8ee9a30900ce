import type { Cas } from "../cas/mod.ts";
import type { Iteration, Store } from "../store/mod.ts";
import { type DiffHunk, type TextDiff, unifiedDiff } from "../textdiff/mod.ts";
import { HistoryError } from "./errors.ts";

/**
 * Largest content, in bytes, compared line by line; a larger side is refused with
 * `too_large` rather than held in memory and diffed at length.
 */
export const MAX_DIFF_BYTES = 4 * 1024 * 1024;

/** Options for {@linkcode diffIterations}. */
export interface IterationDiffOptions {
  /** The old iteration's number. */
  from: number;
  /** The new iteration's number. @default {the path's latest iteration} */
  to?: number | undefined;
  /** Unchanged lines around each change. @default {3} */
  context?: number;
}

/** One side of an {@linkcode IterationDiff}. */
export interface DiffSide {
  /** The per-path iteration number. */
  iteration: number;
  /** The workspace-wide sequence it took. */
  sequence: number;
  /** When it was recorded, epoch milliseconds. */
  timestamp: number;
  /** Who made it (see `ORIGINS` in lib/store). */
  origin: string;
  /** Whether it records the path's removal (compared as empty). */
  deleted: boolean;
  /** Its size in bytes. */
  size: number;
  /** Its content hash (`""` for a deletion). */
  hash: string;
  /** Its full `st_mode`. */
  mode: number;
}

/** Two iterations of a path compared. */
export interface IterationDiff {
  /** The normalized workspace path. */
  path: string;
  /** The old side. */
  from: DiffSide;
  /** The new side. */
  to: DiffSide;
  /** Either side is not text: no hunks. */
  binary: boolean;
  /** Both sides hold the same bytes. */
  identical: boolean;
  /** Lines added. */
  added: number;
  /** Lines removed. */
  removed: number;
  /** The hunks, for a side-by-side view. */
  hunks: DiffHunk[];
  /** Plain sentences about the comparison: a deletion shown as empty, a mode change. */
  notes: string[];
  /** The unified diff (`--- a/PATH@N`, `+++ b/PATH@M`), or a one-line binary note. */
  text: string;
}

/**
 * Compares two iterations of `path` line by line, reading both from the CAS (verified). A
 * deletion is compared as empty content, with a note; an iteration may be older or newer
 * than the other.
 *
 * @param store The iteration store.
 * @param cas Where the content lives.
 * @param path A normalized workspace path.
 * @param options Which iterations.
 * @returns The diff.
 * @throws {HistoryError} `not_found` for an unknown path or iteration, `deleted` when both
 * sides are deletions, `too_large` for content over {@linkcode MAX_DIFF_BYTES}.
 * @throws {ContentNotFoundError | CorruptContentError} When stored content cannot be read.
 */
export async function diffIterations(
  store: Store,
  cas: Cas,
  path: string,
  options: IterationDiffOptions,
): Promise<IterationDiff> {
  const from = iterationOf(store, path, options.from);
  const to = options.to === undefined ? store.latest(path) : iterationOf(store, path, options.to);
  if (!to) throw new HistoryError("not_found", `Unknown path "${path}"`);
  if (from.deleted && to.deleted) {
    throw new HistoryError(
      "deleted",
      `Iterations ${from.iteration} and ${to.iteration} of "${path}" are both deletions: nothing to compare`,
    );
  }
  const notes: string[] = [];
  for (const side of [from, to]) {
    if (side.deleted) notes.push(`iteration ${side.iteration} is a deletion, shown as empty`);
  }
  if (!from.deleted && !to.deleted && from.mode !== to.mode) {
    notes.push(`mode ${octal(from.mode)} -> ${octal(to.mode)}`);
  }
  const diff = await diffContents(cas, contentSide(from, "a"), contentSide(to, "b"), options);
  if (diff.identical) {
    notes.push(`iterations ${from.iteration} and ${to.iteration} hold the same content`);
  }
  return {
    path,
    from: sideOf(from),
    to: sideOf(to),
    binary: diff.binary,
    identical: diff.identical,
    added: diff.added,
    removed: diff.removed,
    hunks: diff.hunks,
    notes,
    text: diff.text,
  };
}

/** One side of {@linkcode diffContents}. */
export interface ContentSide {
  /** The content's hash; `null` or `""` for nothing (compared as empty, e.g. a deletion). */
  hash: string | null;
  /** Its name in the unified diff's header, e.g. `a/notes.md@3`. */
  label: string;
  /** Names it in a refusal, e.g. `iteration 3 of "notes.md"`. */
  what: string;
}

/**
 * Compares two stored contents line by line, read verified from the CAS: what
 * {@linkcode diffIterations} does for two iterations, for any two contents (say a
 * conflict's kept content against the master's version).
 *
 * @param cas Where the content lives.
 * @param from The old side.
 * @param to The new side.
 * @param options Unchanged lines around each change (`context`, default 3).
 * @returns The line diff.
 * @throws {HistoryError} `too_large` for content over {@linkcode MAX_DIFF_BYTES}.
 * @throws {ContentNotFoundError | CorruptContentError} When stored content cannot be read.
 */
export async function diffContents(
  cas: Cas,
  from: ContentSide,
  to: ContentSide,
  options: { context?: number | undefined } = {},
): Promise<TextDiff> {
  const before = await readForDiff(cas, from.hash, from.what);
  const after = await readForDiff(cas, to.hash, to.what);
  return unifiedDiff(before, after, {
    oldLabel: from.label,
    newLabel: to.label,
    ...(options.context === undefined ? {} : { context: options.context }),
  });
}

/**
 * Reads content to compare, refusing what is too large to diff.
 *
 * @param cas Where the content lives.
 * @param hash Its hash, or `null` for nothing (compared as empty).
 * @param what Names the content in the refusal, e.g. `iteration 3 of "a.txt"`.
 * @returns The bytes.
 * @throws {HistoryError} `too_large` over {@linkcode MAX_DIFF_BYTES}.
 */
export async function readForDiff(cas: Cas, hash: string | null, what: string) {
  if (hash === null || hash === "") return new Uint8Array();
  const size = await cas.objectSize(hash);
  if (size !== null && size > MAX_DIFF_BYTES) throw tooLarge(what, size);
  return await cas.readBytes(hash);
}

/**
 * The refusal for content over {@linkcode MAX_DIFF_BYTES}.
 *
 * @param what Names the content.
 * @param size Its size in bytes.
 * @returns The error.
 */
export function tooLarge(what: string, size: number): HistoryError {
  return new HistoryError(
    "too_large",
    `Cannot diff ${what}: ${size} bytes is over the limit of ${MAX_DIFF_BYTES} bytes`,
  );
}

function iterationOf(store: Store, path: string, n: number): Iteration {
  const found = store.iteration(path, n);
  if (found) return found;
  const known = store.latest(path) !== undefined;
  throw new HistoryError(
    "not_found",
    known ? `Unknown iteration ${n} of "${path}"` : `Unknown path "${path}"`,
  );
}

function contentSide(iteration: Iteration, side: "a" | "b"): ContentSide {
  return {
    hash: iteration.deleted ? null : iteration.hash,
    label: `${side}/${iteration.path}@${iteration.iteration}`,
    what: `iteration ${iteration.iteration} of "${iteration.path}"`,
  };
}

function sideOf(iteration: Iteration): DiffSide {
  const { path: _path, ...side } = iteration;
  return side;
}

function octal(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(3, "0");
}

/**
 * A diff as JSON (`--json`, `GET /files/{path}/diff?format=json`): `path`, `from` and `to`
 * (`iteration`, `sequence`, `timestamp`, `origin`, `deleted`, `size`, `hash`, `mode`),
 * `binary`, `identical`, `added`, `removed`, `hunks` (`old_start`, `old_lines`,
 * `new_start`, `new_lines`, `lines`: `[{"kind":" "|"-"|"+"|"\\","text"}]`), `notes` and
 * `text` (the unified diff).
 *
 * @param diff The diff.
 * @returns Its JSON form.
 */
export function iterationDiffToJson(diff: IterationDiff): Record<string, unknown> {
  return { ...diff, hunks: diff.hunks.map(hunkToJson) };
}

/**
 * A hunk as JSON, with snake_case keys.
 *
 * @param hunk The hunk.
 * @returns Its JSON form.
 */
export function hunkToJson(hunk: DiffHunk): Record<string, unknown> {
  return {
    old_start: hunk.oldStart,
    old_lines: hunk.oldLines,
    new_start: hunk.newStart,
    new_lines: hunk.newLines,
    lines: hunk.lines,
  };
}

/**
 * A diff as text for people and `patch`: one `note: …` line per note, then the unified
 * diff (patch tools skip lines before the `---` header).
 *
 * @param diff The diff.
 * @returns The text, ending in a newline.
 */
export function iterationDiffText(diff: Pick<IterationDiff, "notes" | "text">): string {
  return diff.notes.map((note) => `note: ${note}\n`).join("") + diff.text;
}
