import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { sha256Hex } from "../cas/mod.ts";
import { columns } from "../db/mod.ts";
import { forEachLimited } from "../concurrency/mod.ts";
import { lstatOrNull } from "../disk/mod.ts";
import { S_IFLNK, S_IFMT } from "../store/mod.ts";
import { PARALLEL_WRITES, sha256File } from "./_files.ts";

/** One path of a checkpoint's latest tree, as rehydrate would write it. */
export interface TreeEntry {
  /** Workspace-relative path. */
  path: string;
  /** Content hash (for a link: of its target text). */
  hash: string;
  /** File type and permission bits. */
  mode: number;
  /** Size in bytes. */
  size: number;
}

/** What a rehydrate would meet in its target workspace. */
export interface TargetSurvey {
  /** Names at the top of the workspace, Chronicle's own data folder left out, sorted. */
  entries: string[];
  /** Checkpoint paths where something different already is (it would be replaced), sorted. */
  replaced: string[];
}

/**
 * The latest tree of a checkpoint's database copy, read without changing it.
 *
 * @param db The copy, open read-only.
 * @returns Every live path with its hash, mode and size, by path.
 */
export function checkpointTree(db: DatabaseSync): TreeEntry[] {
  return db.prepare(
    `SELECT p.path AS path, i.hash AS hash, i.mode AS mode, i.size AS size
     FROM paths p JOIN iterations i ON i.sequence = p.sequence
     WHERE p.deleted = 0 ORDER BY p.path`,
  ).all().map((row) => {
    const read = columns(row);
    return {
      path: read.text("path"),
      hash: read.text("hash"),
      mode: read.integer("mode"),
      size: read.integer("size"),
    };
  });
}

/**
 * Looks at the target workspace before anything is written: what is there already, and
 * which of the checkpoint's paths hold something else (a file with other content, a link
 * elsewhere, a file where a link goes), so a rehydrate can refuse to overwrite unasked.
 * Identical files do not count as replaced.
 *
 * @param tree The checkpoint's latest tree.
 * @param workspace The absolute target workspace.
 * @param dataDirInside The data folder relative to it, when inside.
 * @returns The survey.
 */
export async function surveyTarget(
  tree: readonly TreeEntry[],
  workspace: string,
  dataDirInside: string | undefined,
): Promise<TargetSurvey> {
  const entries = await topEntries(workspace, dataDirInside);
  if (entries.length === 0) return { entries, replaced: [] };
  const replaced: string[] = [];
  await forEachLimited(tree, PARALLEL_WRITES, async (entry) => {
    if (await differs(entry, join(workspace, ...entry.path.split("/")))) replaced.push(entry.path);
  });
  replaced.sort();
  return { entries, replaced };
}

async function differs(entry: TreeEntry, dest: string): Promise<boolean> {
  let info: Deno.FileInfo | null;
  try {
    info = await lstatOrNull(dest);
  } catch {
    return true; // unreadable: cannot tell it is the same
  }
  // A folder in the way is not overwritten (rehydrate reports it as not written).
  if (info === null || info.isDirectory) return false;
  if ((entry.mode & S_IFMT) === S_IFLNK) {
    if (!info.isSymlink) return true;
    const target = await Deno.readLink(dest);
    return sha256Hex(new TextEncoder().encode(target)) !== entry.hash;
  }
  if (!info.isFile || info.size !== entry.size) return true;
  try {
    return (await sha256File(dest)) !== entry.hash;
  } catch {
    return true;
  }
}

/** The workspace's top-level names, without the data folder (or its parents holding only it). */
async function topEntries(workspace: string, dataDirInside: string | undefined): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(workspace)) {
      if (!(await holdsOnlyDataDir(workspace, entry.name, dataDirInside))) names.push(entry.name);
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  return names.sort();
}

/** Whether `name` is the data folder, or a folder on the way to it that holds nothing else. */
async function holdsOnlyDataDir(
  parent: string,
  name: string,
  dataDirInside: string | undefined,
): Promise<boolean> {
  if (dataDirInside === undefined) return false;
  const [first, ...rest] = dataDirInside.split("/");
  if (name !== first) return false;
  if (rest.length === 0) return true;
  const folder = join(parent, name);
  if (!(await lstatOrNull(folder))?.isDirectory) return false;
  for await (const entry of Deno.readDir(folder)) {
    if (!(await holdsOnlyDataDir(folder, entry.name, rest.join("/")))) return false;
  }
  return true;
}
