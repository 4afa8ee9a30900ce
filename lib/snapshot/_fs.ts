/**
 * File-system helpers for `lib/snapshot`: symlinked-parent checks, folder fsync and atomic
 * symlink creation. Internal.
 *
 * @module
 */
import { basename, dirname, join } from "node:path";
import { WORKSPACE_TEMP_SUFFIX } from "../cas/mod.ts";
import { lstatOrNull, syncDir } from "../disk/mod.ts";

/**
 * The first ancestor of `path` (workspace-relative) that is a symbolic link, or `undefined`.
 * Missing ancestors end the search.
 */
export async function linkedAncestor(root: string, path: string): Promise<string | undefined> {
  const segments = path.split("/");
  for (let i = 1; i < segments.length; i++) {
    const ancestor = segments.slice(0, i).join("/");
    const info = await lstatOrNull(join(root, ancestor));
    if (!info) return undefined;
    if (info.isSymlink) return ancestor;
    if (!info.isDirectory) return undefined;
  }
  return undefined;
}

/** A temp name beside `dest` that watchers ignore (see `WORKSPACE_TEMP_SUFFIX`). */
export function tempBeside(dest: string): string {
  return join(
    dirname(dest),
    `.${basename(dest)}.${Deno.pid}-${crypto.randomUUID()}${WORKSPACE_TEMP_SUFFIX}`,
  );
}

/** Creates or replaces `dest` with a symbolic link to `target`, atomically (temp + rename). */
export async function writeSymlinkAtomic(dest: string, target: string): Promise<void> {
  const temp = tempBeside(dest);
  await Deno.symlink(target, temp);
  try {
    await Deno.rename(temp, dest);
  } catch (error) {
    await Deno.remove(temp).catch(() => {/* already gone */});
    throw error;
  }
  await syncDir(dirname(dest));
}
