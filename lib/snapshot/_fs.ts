/**
 * File-system helpers for `lib/snapshot`: symlinked-parent checks. Atomic symlink writes
 * live in `lib/disk`. Internal.
 *
 * @module
 */
import { join } from "node:path";
import { lstatOrNull } from "../disk/mod.ts";

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
