import { posix } from "node:path";

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
