/** A path that may not travel or be stored: it names the problem in its message. */
export class PathError extends TypeError {
  /** The path as it was given. */
  readonly path: string;
  /** Makes the error naming the path and what is wrong with it. */
  constructor(path: string, problem: string) {
    super(`Invalid path "${printable(path)}": ${problem}`);
    this.name = "PathError";
    this.path = path;
  }
}

/** Options for {@linkcode normalizeWorkspacePath}. */
export interface NormalizeOptions {
  /**
   * Chronicle's data folder relative to the workspace (e.g. `.chronicle`); paths inside it
   * are refused. `undefined` when the data folder lies outside the workspace.
   */
  dataDir?: string | undefined;
  /** Whether the empty path (the workspace root itself) is allowed. @default {false} */
  allowRoot?: boolean;
}

/**
 * Normalizes a workspace-relative path (PROTOCOL.md §7): `/` separators, no `.` or empty
 * segments, and refuses `..`, a leading `/`, a backslash, NUL, control characters, and
 * anything inside the data folder.
 *
 * @param path A path relative to the workspace root.
 * @returns The normalized path, e.g. `"src/main.ts"`.
 * @throws {PathError} When the path is not a safe workspace path.
 *
 * @example Normalizing
 * ```ts
 * import { normalizeWorkspacePath } from "./workspace_path.ts";
 * normalizeWorkspacePath("./src//main.ts"); // "src/main.ts"
 * ```
 */
export function normalizeWorkspacePath(path: string, options: NormalizeOptions = {}): string {
  if (typeof path !== "string") throw new PathError(String(path), "not a string");
  // Most paths come normalized already (every change a replica applies): checked in one
  // pass, no copy made. Anything else takes the full check, which names the problem.
  if (isNormalized(path)) {
    if (options.dataDir && isInside(path, options.dataDir)) {
      throw new PathError(path, "inside Chronicle's data folder");
    }
    return path;
  }
  if (path.includes("\0")) throw new PathError(path, "contains a NUL byte");
  // deno-lint-ignore no-control-regex -- control characters are exactly what we refuse
  if (/[\x01-\x1f\x7f]/.test(path)) throw new PathError(path, "contains a control character");
  if (path.startsWith("/")) throw new PathError(path, "absolute paths are not allowed");
  if (path.includes("\\")) throw new PathError(path, "backslashes are not allowed");
  const segments = path.split("/").filter((segment) => segment !== "" && segment !== ".");
  if (segments.includes("..")) throw new PathError(path, "'..' segments are not allowed");
  const normalized = segments.join("/");
  if (normalized === "" && !options.allowRoot) throw new PathError(path, "empty path");
  if (normalized.length > 4096) throw new PathError(path, "longer than 4096 characters");
  for (const segment of segments) {
    // A UTF-16 code unit takes at most 3 bytes in UTF-8: a short name needs no encoding
    // (a path is normalized for every change a replica applies: no copy made for each).
    if (segment.length * 3 <= NAME_MAX_BYTES) continue;
    if (UTF8.encode(segment).length > NAME_MAX_BYTES) {
      throw new PathError(path, `a name is longer than ${NAME_MAX_BYTES} bytes`);
    }
  }
  if (options.dataDir && isInside(normalized, options.dataDir)) {
    throw new PathError(path, "inside Chronicle's data folder");
  }
  return normalized;
}

/**
 * Whether {@linkcode normalizeWorkspacePath} would return `path` as it is, data folder
 * aside: not empty, at most 4,096 characters, no empty, `.` or `..` segment, no control
 * character, NUL or backslash, and every name short enough not to need measuring in UTF-8.
 * `false` sends a path to the full check, which decides it.
 */
function isNormalized(path: string): boolean {
  const length = path.length;
  if (length === 0 || length > 4096) return false;
  let nameStart = 0;
  for (let at = 0; at <= length; at++) {
    const code = at < length ? path.charCodeAt(at) : SLASH;
    if (code === SLASH) {
      const nameLength = at - nameStart;
      if (nameLength === 0 || nameLength * 3 > NAME_MAX_BYTES) return false;
      if (path.charCodeAt(nameStart) === DOT) {
        if (nameLength === 1) return false;
        if (nameLength === 2 && path.charCodeAt(nameStart + 1) === DOT) return false;
      }
      nameStart = at + 1;
    } else if (code < 0x20 || code === 0x7f || code === BACKSLASH) return false;
  }
  return true;
}

const SLASH = 0x2f;
const DOT = 0x2e;
const BACKSLASH = 0x5c;

/** The longest file or folder name file systems take (NAME_MAX), in UTF-8 bytes. */
const NAME_MAX_BYTES = 255;
const UTF8 = new TextEncoder();

/** Whether `path` is `folder` itself or lies beneath it (both normalized, relative). */
export function isInside(path: string, folder: string): boolean {
  if (folder === "") return true;
  return path === folder || path.startsWith(folder + "/");
}

/** The folders holding a normalized path, innermost first (the root, `""`, left out). */
export function ancestorsOf(path: string): string[] {
  const out: string[] = [];
  for (let slash = path.lastIndexOf("/"); slash > 0; slash = path.lastIndexOf("/", slash - 1)) {
    out.push(path.slice(0, slash));
  }
  return out;
}

/** The parent folder of a normalized path, `""` for the root's children. */
export function parentOf(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash === -1 ? "" : path.slice(0, slash);
}

// deno-lint-ignore no-control-regex -- make control characters visible in messages
const CONTROL = /[\x00-\x1f\x7f]/g;

function printable(path: string): string {
  const hex = (c: string) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`;
  return path.replace(CONTROL, hex).slice(0, 200);
}

/**
 * What is wrong with a path received from the other side, `null` when it is a safe,
 * normalized workspace path. `escapes` marks an absolute path or a `..` segment: the
 * sender is hostile or broken.
 *
 * @param path The path as received.
 * @param dataDir The data folder inside the workspace, if any.
 */
export function wirePathProblem(
  path: string,
  dataDir?: string | undefined,
): { problem: string; escapes: boolean } | null {
  if (path.startsWith("/") || path.split("/").includes("..")) {
    return { problem: `path "${printable(path)}" leaves the workspace`, escapes: true };
  }
  try {
    if (normalizeWorkspacePath(path, { dataDir }) === path) return null;
    return { problem: `path "${printable(path)}" is not normalized`, escapes: false };
  } catch (error) {
    if (error instanceof PathError) return { problem: error.message, escapes: false };
    throw error;
  }
}
