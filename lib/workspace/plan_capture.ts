import { EMPTY_HASH } from "../cas/mod.ts";
import { PathSet } from "../paths/mod.ts";
import type { FileState } from "../store/mod.ts";
import type { Observation } from "./file_observation.ts";

/** A file, link or folder seen on disk. */
export type SeenFile = Extract<Observation, { kind: "file" | "symlink" | "dir" }>;

/**
 * The content hash a folder is recorded with: it has no content, so the empty content's
 * (PROTOCOL.md §8). Its size is 0 and its mode carries the folder type bits.
 */
export const FOLDER_HASH: string = EMPTY_HASH;

/** What capture must do after looking at the disk. */
export interface CapturePlan {
  /** Files whose content must be read and stored (new or changed since last seen). */
  toHash: SeenFile[];
  /** Files unchanged since last seen, with their known hash; every folder seen. */
  unchanged: Array<{ file: SeenFile; hash: string }>;
  /** Live paths that are gone from disk. */
  deleted: string[];
}

/**
 * Decides, without I/O, which observed files need hashing and which live paths were
 * deleted. A file is trusted unchanged only when size, mtime, inode and mode all match
 * what was last recorded for it. A folder has no content to read: it is always
 * "unchanged" with {@linkcode FOLDER_HASH}, and its caller compares its mode with the record.
 *
 * @param seen Files and links found on disk within the captured scope.
 * @param known What the scanner last recorded, by path.
 * @param live Paths the store holds as live within the same scope.
 */
export function planCapture(
  seen: SeenFile[],
  known: Map<string, FileState>,
  live: Iterable<string>,
): CapturePlan {
  const plan: CapturePlan = { toHash: [], unchanged: [], deleted: [] };
  const present = new Set<string>();
  for (const file of seen) {
    present.add(file.path);
    if (file.kind === "dir") {
      plan.unchanged.push({ file, hash: FOLDER_HASH });
      continue;
    }
    const state = known.get(file.path);
    if (state && sameStat(state, file)) plan.unchanged.push({ file, hash: state.hash });
    else plan.toHash.push(file);
  }
  for (const path of live) {
    if (!present.has(path)) plan.deleted.push(path);
  }
  return plan;
}

/** What a scan does with one path it saw: read it, record it as it is, or nothing. */
export type ScanVerdict = "hash" | "recordsOtherwise" | "unchanged";

/**
 * {@linkcode planCapture}'s rule for one path a scan saw, with the records of that path
 * alone (so a scan can stream them): a file whose last-seen state differs (or that was
 * never seen) is read again (`hash`); one found unchanged, or a folder, is recorded again
 * only when its live record holds another hash or mode (`recordsOtherwise`). Pure.
 *
 * @param file What the scan saw.
 * @param known What the scanner last saw of the path, if anything.
 * @param recorded The path's live record (hash and mode), if it is live.
 * @returns The verdict.
 */
export function scanVerdict(
  file: SeenFile,
  known: FileState | undefined,
  recorded: { hash: string; mode: number } | undefined,
): ScanVerdict {
  const hash = file.kind === "dir"
    ? FOLDER_HASH
    : known && sameStat(known, file)
    ? known.hash
    : undefined;
  if (hash === undefined) return "hash";
  return recorded?.hash !== hash || recorded.mode !== file.mode ? "recordsOtherwise" : "unchanged";
}

/** What a file's `lstat` says that tells one version of it from another. */
type StatKey = Pick<SeenFile, "size" | "mtimeMs" | "ino" | "mode">;

/** Whether two looks at a file saw the same size, mtime, inode and mode. */
export function sameStat(a: StatKey, b: StatKey): boolean {
  return a.size === b.size && a.mtimeMs === b.mtimeMs && a.ino === b.ino && a.mode === b.mode;
}

/**
 * How long after a write an mtime can still be followed by another write in the same
 * clock tick ("racy git"). A file modified this recently is re-hashed on the next look.
 */
export const RACY_WINDOW_MS = 2000;

/**
 * How long a file written under a temp name waits, past its modification time, before it is
 * put in place, for {@linkcode settledWhenPlaced} to trust its record at once. The kernel
 * stamps a write with a clock that lags the real one by up to a tick (10 ms at 100 Hz), a
 * file system may round further (exFAT: 10 ms), and times are compared in whole
 * milliseconds: 25 ms covers all three.
 */
export const SETTLE_MS = 25;

/**
 * Whether a file placed at `placedAt` (epoch ms, the rename or link that gave it its name)
 * can be trusted unchanged while its size, mtime, inode and mode stay as written, however
 * soon it is looked at again. Until it was placed nobody could reach it by its name, and
 * any write after that carries a later modification time, so no second write within the
 * same clock tick can hide ("racy git"). Not for a time in whole seconds, which may come
 * from a file system that keeps nothing finer (ext3, FAT): such a file is racy as usual.
 * RACE: a clock set back by more than {@linkcode SETTLE_MS} between the write and a later
 * one of the same size could stamp both alike, as it could defeat
 * {@linkcode RACY_WINDOW_MS}. Pure.
 *
 * @param mtimeMs The written file's modification time, from its own handle.
 * @param placedAt When it was put in place (epoch ms).
 * @returns Whether its record needs no second read.
 */
export function settledWhenPlaced(mtimeMs: number, placedAt: number): boolean {
  return mtimeMs % 1000 !== 0 && placedAt >= mtimeMs + SETTLE_MS;
}

/**
 * The state to remember for a file, made untrustworthy when its mtime is too recent,
 * unless it was written and placed settled (see {@linkcode settledWhenPlaced}).
 */
export function stateToRemember(
  file: SeenFile,
  hash: string,
  now: number,
  settled = false,
): FileState {
  const racy = !settled && now - file.mtimeMs < RACY_WINDOW_MS;
  return {
    path: file.path,
    size: file.size,
    mtimeMs: racy ? -1 : file.mtimeMs,
    ino: file.ino,
    mode: file.mode,
    hash,
  };
}

/**
 * Whether a scan leaves a file it found to the watcher: a file or link modified after the
 * millisecond `since` (when the scan's walk began, the watcher already running) and not
 * after `now` was changed after the walk began, and the watcher reports it (or reports that
 * it lost its event, and a later scan records it, in order with what else was lost). One
 * modified within that millisecond may have been written just before the watcher began:
 * recorded (the watcher's report of it, if any, then finds it unchanged). A modification
 * time after now was set, not made by a write (`touch -d`, an archive, another machine's
 * clock): recorded, since no later scan would find it any earlier. Folders have no such
 * time: never left. Pure.
 *
 * @param file What the scan found.
 * @param since When the scan's walk began (epoch ms).
 * @param now The time now (epoch ms).
 * @returns Whether to leave it out of the scan.
 */
export function changedDuringScan(file: SeenFile, since: number, now: number): boolean {
  return file.kind !== "dir" && file.mtimeMs > since && file.mtimeMs <= now;
}

/**
 * The scopes without those inside another (ancestors are shorter, so they come first). A
 * scope looked at alone (`shallow`) covers nothing.
 *
 * @param scopes Workspace paths to look at.
 * @param shallow The scopes looked at alone.
 * @returns The scopes to look at, those covering others first.
 */
export function dedupeScopes(scopes: string[], shallow?: ReadonlySet<string>): string[] {
  const kept = new PathSet();
  const alone: string[] = [];
  for (const scope of [...new Set(scopes)].sort((a, b) => a.length - b.length)) {
    if (kept.covers(scope)) continue;
    if (shallow?.has(scope)) alone.push(scope);
    else kept.add(scope);
  }
  return [...kept.paths, ...alone];
}
