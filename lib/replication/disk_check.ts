import { hashFile, sha256Hex } from "../cas/mod.ts";
import { type DiskStamp, stampOf } from "../disk/mod.ts";
import { isFolderMode, S_IFLNK, S_IFMT } from "../store/mod.ts";

/** A path's recorded state, to compare with the disk. */
export interface ExpectedState {
  /** Content hash, `""` when deleted. */
  hash: string;
  /** Content size. */
  size: number;
  /** Full `st_mode`. */
  mode: number;
  /** Whether the path should be absent. */
  deleted: boolean;
}

/**
 * Tells whether the file at `root/path` still is what the store last recorded: the same
 * type, permission bits and content (hashed; the size is compared first). Used before
 * replacing a file, so that a change nobody has captured yet is never overwritten
 * unseen (it is captured first, and then weighed as a conflict). Links are not followed.
 * A recorded folder matches a folder with the same permission bits (what it holds is
 * not its content).
 *
 * @param root The workspace root.
 * @param path A normalized workspace path.
 * @param expected The recorded state, `undefined` when nothing was recorded.
 * @returns `true` when the disk matches.
 */
export async function diskMatches(
  root: string,
  path: string,
  expected: ExpectedState | undefined,
): Promise<boolean> {
  return (await matchingStamp(root, path, expected)) !== false;
}

/** What {@linkcode matchingStamp} saw: the stamp of a file or link there, none for a folder or nothing. */
export interface SeenStamp {
  /** The stamp, taken before the content was hashed; absent for a folder or nothing. */
  stamp?: DiskStamp;
}

/**
 * {@linkcode diskMatches}, answering with what it saw when the disk matches: the stamp
 * of the file or link there (taken before its content was hashed), for the write that
 * then replaces it to check again at the last moment (`WorkspaceChange.unchangedSince`),
 * so that a change landing after this look is not replaced unseen either.
 *
 * @param root The workspace root.
 * @param path A normalized workspace path.
 * @param expected The recorded state, `undefined` when nothing was recorded.
 * @returns What was seen, or `false` when the disk differs.
 */
export async function matchingStamp(
  root: string,
  path: string,
  expected: ExpectedState | undefined,
): Promise<SeenStamp | false> {
  const absent = expected === undefined || expected.deleted;
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(`${root}/${path}`); // microseconds; see lib/disk
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      return absent ? {} : false;
    }
    throw error;
  }
  if (!(await infoMatches(root, path, expected, info))) return false;
  return info.isDirectory ? {} : { stamp: stampOf(info) };
}

async function infoMatches(
  root: string,
  path: string,
  expected: ExpectedState | undefined,
  info: Deno.FileInfo,
): Promise<boolean> {
  if (expected === undefined || expected.deleted) {
    return info.isDirectory; // an unrecorded folder is looked at by its own capture
  }
  if (isFolderMode(expected.mode)) {
    return info.isDirectory && ((info.mode ?? 0) & 0o7777) === (expected.mode & 0o7777);
  }
  if (info.isDirectory) return false;
  const isLink = (expected.mode & S_IFMT) === S_IFLNK;
  if (info.isSymlink !== isLink) return false;
  if (isLink) {
    const target = new TextEncoder().encode(Deno.readLinkSync(`${root}/${path}`));
    return sha256Hex(target) === expected.hash;
  }
  if (((info.mode ?? 0) & 0o7777) !== (expected.mode & 0o7777)) return false;
  if (info.size !== expected.size) return false;
  return await hashOrNull(`${root}/${path}`) === expected.hash;
}

async function hashOrNull(path: string): Promise<string | null> {
  try {
    return (await hashFile(path)).hash;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}
