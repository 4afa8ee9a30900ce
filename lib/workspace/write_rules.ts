import { posix } from "node:path";
import { S_IFLNK, S_IFMT, S_IFREG } from "../store/mod.ts";

/**
 * Permission bits a replica's write-back may set by default: read, write and execute for
 * owner, group and others. Setuid, setgid and sticky (0o7000) are dropped.
 */
export const DEFAULT_WRITEBACK_MODE_BITS = 0o777;

/**
 * Chronicle's own control files inside a workspace: they set the recording policy, so a
 * sandbox may not write them back (see SECURITY.md).
 */
export const CONTROL_FILES: readonly string[] = [".chronicleignore"];

/**
 * Why a symbolic link at `path` may not point at `target`, or `null` when it may: the
 * target must be relative, and once resolved against the link's folder it must stay
 * inside the workspace (it may point at the root itself or at anything beneath it; a
 * link to a missing path is allowed). Pure: looks at no disk, so a link the target
 * passes through is judged as written (each such link is itself held to this rule).
 *
 * @param path The link's normalized workspace path.
 * @param target The link's target, as it would be written.
 * @returns The problem in words, or `null`.
 *
 * @example Judging targets
 * ```ts
 * import { linkTargetProblem } from "./write_rules.ts";
 * linkTargetProblem("a/link", "../b.txt"); // null
 * linkTargetProblem("a/link", "../../etc/passwd"); // "its target … leaves the workspace"
 * linkTargetProblem("link", "/etc"); // "its target … is absolute"
 * ```
 */
export function linkTargetProblem(path: string, target: string): string | null {
  const shown = JSON.stringify(target.slice(0, 200));
  if (target === "") return "its target is empty";
  if (target.includes("\0")) return `its target ${shown} contains a NUL byte`;
  if (target.startsWith("/")) return `its target ${shown} is absolute (only relative targets)`;
  if (target.length > 4096) return "its target is longer than 4096 characters";
  // Relative to the root: a path that climbs above it keeps its leading "..".
  const resolved = posix.join(posix.dirname(path), target);
  if (resolved === ".." || resolved.startsWith("../")) {
    return `its target ${shown} leaves the workspace`;
  }
  return null;
}

/**
 * The full mode a write-back may set: the file type bits kept, the permission bits
 * limited to `allowed`.
 *
 * @param mode The mode as sent (`st_mode`, or permission bits alone).
 * @param allowed The permission bits allowed (see {@linkcode DEFAULT_WRITEBACK_MODE_BITS}).
 * @returns `mode` with every permission bit outside `allowed` cleared.
 *
 * @example Dropping setuid
 * ```ts
 * import { maskMode } from "./write_rules.ts";
 * maskMode(0o104755, 0o777) === 0o100755; // true
 * ```
 */
export function maskMode(mode: number, allowed: number): number {
  return (mode & ~0o7777) | (mode & 0o7777 & allowed);
}

/**
 * Whether `path` is one of Chronicle's control files ({@linkcode CONTROL_FILES}).
 *
 * @param path A normalized workspace path.
 * @returns `true` for a control file at the workspace root.
 */
export function isControlFile(path: string): boolean {
  return CONTROL_FILES.includes(path);
}

/** What {@linkcode bytesWriteMode} looks at. */
export interface BytesWriteInput {
  /** Whether a symbolic link is on disk at the path now. */
  linkOnDisk: boolean;
  /** The path's last recorded mode, or `undefined` when nothing (or a deletion) is recorded. */
  recordedMode: number | undefined;
  /** The mode the caller gave, if any. */
  given: number | undefined;
}

/**
 * The mode a write of bytes gives a regular file: the one given, else the last recorded
 * one, else `0o100644`. A link at the path (on disk or as recorded) is never rewritten by
 * bytes: writing a link's target as content would make the body a new link target.
 *
 * @param input What is at the path and what was asked.
 * @returns `{ mode }`, or `{ problem }` in words when the write must be refused.
 *
 * @example Deciding
 * ```ts
 * import { bytesWriteMode } from "./write_rules.ts";
 * bytesWriteMode({ linkOnDisk: false, recordedMode: 0o100755, given: undefined });
 * // { mode: 0o100755 }
 * ```
 */
export function bytesWriteMode(input: BytesWriteInput): { mode: number } | { problem: string } {
  const isLink = (mode: number | undefined) => mode !== undefined && (mode & S_IFMT) === S_IFLNK;
  if (input.linkOnDisk || isLink(input.recordedMode)) {
    return {
      problem:
        "a symbolic link is there; bytes are written to regular files only (remove the link first)",
    };
  }
  const mode = input.given ?? input.recordedMode ?? 0o100644;
  const type = mode & S_IFMT;
  if (type !== 0 && type !== S_IFREG) {
    return { problem: `mode ${mode.toString(8)} is not a regular file's` };
  }
  return { mode };
}
