import { normalizeWorkspacePath, PathError } from "../paths/mod.ts";

/** A path found on disk that is not recorded, and why. */
export interface Unrecorded {
  /** The path relative to the workspace root, as found. */
  path: string;
  /** Why it is not recorded. */
  reason: string;
}

/**
 * The reason a special file (a named pipe, a socket, a device) is not recorded: it has no
 * content to keep, and reading one blocks or has side effects.
 */
export function specialFileReason(what: string): string {
  return `${what}: special files (named pipes, sockets, devices) are not recorded`;
}

/**
 * Why a name a folder listing gave is not recorded: Deno hands file names to JavaScript
 * as strings, replacing bytes that are not UTF-8 with U+FFFD, so such a file cannot even
 * be looked at by its name (the name given is not the file's).
 */
export const INVALID_UTF8_REASON = "the name is not valid UTF-8 (shown with U+FFFD)";

/**
 * The one check every path found on disk passes before it is recorded, for the scan and the
 * watcher alike: the normalized path, or `null` when it may not be recorded (a backslash, a
 * control character, a `..`; see `normalizeWorkspacePath`), noted in `skipped` with the
 * reason. A replica would refuse such a path, so it is never recorded nor sent.
 *
 * @param path The path relative to the workspace root, as found.
 * @param skipped Receives the path and the reason when it is refused.
 * @returns The normalized path, or `null`.
 * @example
 * ```ts
 * import { recordablePath } from "./recordable.ts";
 * const skipped: Array<{ path: string; reason: string }> = [];
 * recordablePath("back\\slash.txt", skipped); // null, skipped holds the reason
 * recordablePath("src//a.ts", skipped); // "src/a.ts"
 * ```
 */
export function recordablePath(path: string, skipped: Unrecorded[]): string | null {
  try {
    return normalizeWorkspacePath(path);
  } catch (error) {
    if (!(error instanceof PathError)) throw error;
    skipped.push({ path, reason: error.message });
    return null;
  }
}

/**
 * Whether a name that was not found where a folder listing put it stands for a name that is
 * not valid UTF-8 (see {@linkcode INVALID_UTF8_REASON}). Pure.
 */
export function lostInDecoding(name: string): boolean {
  return name.includes("\uFFFD");
}
