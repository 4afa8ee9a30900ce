/**
 * The pieces of `ChangeWriter` that need none of its state: what a batch's chunk holds,
 * the wait that settles it, and small decisions about what the disk shows. Internal to
 * `lib/workspace`.
 *
 * @module
 */
import type { PreparedFile } from "../cas/mod.ts";
import { isMissing, lstatOrNullSync, syncFileSystem } from "../disk/mod.ts";
import { isFolderMode, S_IFLNK, S_IFMT } from "../store/mod.ts";
import { observe } from "./file_observation.ts";
import { fileSystemsToFlush } from "./flush_targets.ts";
import { type SeenFile, SETTLE_MS } from "./plan_capture.ts";
import type { WorkspaceChange } from "./workspace_types.ts";

/** How files are written: see `AtomicWriteOptions`. */
export type WriteFlags = { visibleFirst: boolean; syncFile: boolean; keepGivenContent: boolean };

/** A write of a regular file, its mode with the type bits. */
export type FileChange = Extract<WorkspaceChange, { hash: string }>;

/** What {@linkcode ChangeWriter.applyChanges}'s `#makeChange` answers for a file left to place. */
export const UNPLACED = Symbol("unplaced");

/** One chunk of a batch: the changes made, and the files written but not yet in place. */
export interface Chunk {
  made: WorkspaceChange[];
  unplaced: { change: FileChange; prepared: PreparedFile }[];
}

/**
 * Waits until every file of `unplaced` can be placed settled (see `settledWhenPlaced`): at
 * most {@linkcode SETTLE_MS}, and only for the last chunk of a batch.
 */
export async function untilSettled(unplaced: Chunk["unplaced"]): Promise<void> {
  let latest = -Infinity;
  for (const { prepared } of unplaced) {
    latest = Math.max(latest, prepared.written.mtime?.getTime() ?? -Infinity);
  }
  const wait = Math.min(latest + SETTLE_MS - Date.now(), SETTLE_MS);
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}

/** What the disk holds where a change made something: see `ChangeWriter.#sinceMade`. */
export type SinceMade = "held" | "overtaken" | "changed";

/** Whether `info` (a look at a path, `null`: nothing there) is still what a change of `mode` made. */
export function sinceMade(info: Deno.FileInfo | null, mode: number): SinceMade {
  if (isFolderMode(mode)) {
    if (info?.isDirectory !== true) return "changed";
    return ((info.mode ?? 0) & 0o7777) === (mode & 0o7777) ? "held" : "overtaken";
  }
  if ((mode & S_IFMT) === S_IFLNK) return info?.isSymlink === true ? "held" : "changed";
  return info?.isFile === true ? "held" : "changed";
}

/**
 * Flushes the file systems holding these folders, once each (see `fileSystemsToFlush`:
 * a folder whose device the batch's checks found is not looked at again).
 *
 * @param folders Absolute folders.
 * @param known The device of each folder, where the batch's checks found it already.
 * @returns `false` when that cannot be done here (see `syncFileSystem` in lib/disk).
 */
export async function syncFileSystems(
  folders: string[],
  known: (number | undefined)[],
): Promise<boolean> {
  const targets = fileSystemsToFlush(folders, known, (folder) => {
    try {
      return Deno.statSync(folder).dev;
    } catch (error) {
      if (isMissing(error)) return null; // RACE: removed since; nothing left to flush
      throw error;
    }
  });
  for (const folder of targets) {
    if (!(await syncFileSystem(folder))) return false;
  }
  return true;
}

/**
 * Whether a write failed because a folder is at `absolute`: a rename over it says so; a
 * create-only write finds something there, which may be a folder.
 */
export function isFolderInTheWay(error: unknown, absolute: string): boolean {
  if (error instanceof Deno.errors.IsADirectory) return true;
  return error instanceof Deno.errors.AlreadyExists &&
    lstatOrNullSync(absolute)?.isDirectory === true;
}

/** The observation of a file just written, from its handle's status (`null`: not a file). */
export function observeFile(path: string, info: Deno.FileInfo): SeenFile | null {
  const observation = observe(path, info);
  return observation.kind === "file" ? observation : null;
}
