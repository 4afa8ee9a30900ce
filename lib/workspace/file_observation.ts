import { isMissing, specialFileKind } from "../disk/mod.ts";
import { S_IFDIR, S_IFLNK, S_IFMT, S_IFREG } from "../store/mod.ts";

/** What a path looks like on disk right now (from `lstat`; links are never followed). */
export type Observation =
  | {
    /** Normalized workspace-relative path. */
    path: string;
    /** A regular file, a symbolic link, or a folder (seen like a file of no content whose mode has the folder type bits). */
    kind: "file" | "symlink" | "dir";
    /** Size in bytes (a link's: its target's length; a folder's: 0). */
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
    /** Nothing there. */
    kind: "absent";
  }
  | {
    /** Normalized workspace-relative path. */
    path: string;
    /** Something else: a special file, never opened nor recorded. */
    kind: "other";
    /** What it is, for people: "a named pipe", "a socket", "a device". */
    what: string;
    /** Whether it is a named pipe (see `PipeHolder`). */
    pipe: boolean;
  };

/** Turns an `lstat` result into an observation. */
export function observe(path: string, info: Deno.FileInfo): Observation {
  const special = specialFileKind(info);
  if (special !== null) return { path, kind: "other", what: special, pipe: info.isFifo === true };
  const kind = info.isDirectory ? "dir" : info.isSymlink ? "symlink" : "file";
  const typeBits = kind === "dir" ? S_IFDIR : kind === "symlink" ? S_IFLNK : S_IFREG;
  // Keep the permission bits from the OS and the type bits we are sure of.
  const mode = typeBits | ((info.mode ?? (kind === "dir" ? 0o755 : 0o644)) & ~S_IFMT);
  return {
    path,
    kind,
    size: kind === "dir" ? 0 : info.size,
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
