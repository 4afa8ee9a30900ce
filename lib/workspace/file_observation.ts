import { isMissing } from "../disk/mod.ts";
import { S_IFLNK, S_IFMT, S_IFREG } from "../store/mod.ts";

/** What a path looks like on disk right now (from `lstat`; links are never followed). */
export type Observation =
  | {
    /** Normalized workspace-relative path. */
    path: string;
    /** A regular file or a symbolic link. */
    kind: "file" | "symlink";
    /** Size in bytes (a link's: its target's length). */
    size: number;
    /** Modification time, epoch ms. */
    mtimeMs: number;
    /** Inode number. */
    ino: number;
    /** Full POSIX mode including type bits. */
    mode: number;
  }
  | {
    /** Normalized workspace-relative path. */
    path: string;
    /** A folder, nothing there, or something else (a socket, a device). */
    kind: "dir" | "absent" | "other";
  };

/** Turns an `lstat` result into an observation. */
export function observe(path: string, info: Deno.FileInfo): Observation {
  if (info.isDirectory) return { path, kind: "dir" };
  if (!info.isFile && !info.isSymlink) return { path, kind: "other" };
  const typeBits = info.isSymlink ? S_IFLNK : S_IFREG;
  // Keep the permission bits from the OS and the type bits we are sure of.
  const mode = typeBits | ((info.mode ?? 0o644) & ~S_IFMT);
  return {
    path,
    kind: info.isSymlink ? "symlink" : "file",
    size: info.size,
    mtimeMs: info.mtime?.getTime() ?? 0,
    ino: info.ino ?? 0,
    mode,
  };
}

/**
 * `lstat` that answers `absent` instead of throwing for a missing path. Synchronous: an
 * lstat takes microseconds, far less than a round trip through Deno's blocking pool.
 */
export function observePath(root: string, path: string): Observation {
  try {
    return observe(path, Deno.lstatSync(`${root}/${path}`));
  } catch (error) {
    if (isMissing(error)) {
      return { path, kind: "absent" };
    }
    throw error;
  }
}
