import { isAbsolute, posix } from "node:path";
import { normalizeWorkspacePath, PathError } from "../paths/mod.ts";
import { type Action, SNAPSHOT_ACTION_TYPES, type SnapshotActionType } from "./types.ts";

/** Options for {@linkcode affectedPaths} and {@linkcode resolveActionPath}. */
export interface ResolveOptions {
  /** Absolute workspace root. */
  root: string;
  /** Chronicle's data folder relative to the root, refused as a target; `undefined` when outside. */
  dataDir?: string | undefined;
}

/** One path an action will change, to capture before it runs. */
export interface CaptureTarget {
  /** Normalized workspace-relative path. */
  path: string;
  /** The kind recorded when nothing exists there yet. */
  absentKind: "file" | "dir";
}

/** What {@linkcode affectedPaths} decided for an action. */
export interface AffectedPaths {
  /** The action type. */
  actionType: SnapshotActionType;
  /** One line for people, e.g. `"move_file: a.txt -> b.txt"`. */
  summary: string;
  /** The paths to capture, without duplicates. */
  targets: CaptureTarget[];
}

const DIR_ACTIONS: ReadonlySet<string> = new Set(["create_dir", "delete_dir", "move_dir"]);
const TWO_PATH_ACTIONS: ReadonlySet<string> = new Set(["move_file", "copy_file", "move_dir"]);

/**
 * Decides which paths an action will change. Pure.
 *
 * - `write_file`, `delete_file`, `create_dir`, `delete_dir`: `payload.path`.
 * - `move_file`, `move_dir`: both `payload.source` (or `payload.path`) and `payload.destination`.
 * - `copy_file`: `payload.destination` only (the source is not changed).
 * - Every other type, reads included: `null` (nothing to snapshot).
 *
 * @param action The action about to run.
 * @param options The workspace root and data folder.
 * @returns The paths to capture, or `null` when the action changes no files.
 * @throws {TypeError} When a path field is missing or not a string.
 * @throws {PathError} When a path resolves outside the workspace, to its root, or into the data folder.
 *
 * @example A move captures both sides
 * ```ts
 * import { affectedPaths } from "./affected_paths.ts";
 * const decided = affectedPaths(
 *   { type: "move_file", payload: { source: "a.txt", destination: "/ws/b.txt" } },
 *   { root: "/ws" },
 * );
 * if (decided?.targets.map((t) => t.path).join() !== "a.txt,b.txt") throw new Error("wrong");
 * ```
 */
export function affectedPaths(action: Action, options: ResolveOptions): AffectedPaths | null {
  if (typeof action !== "object" || action === null || typeof action.type !== "string") {
    throw new TypeError('An action needs a string "type"');
  }
  const type = action.type;
  if (!isSnapshotActionType(type)) return null;
  const payload = action.payload ?? {};
  const absentKind = DIR_ACTIONS.has(type) ? "dir" : "file";
  if (!TWO_PATH_ACTIONS.has(type)) {
    const path = resolveActionPath(field(type, payload, ["path"]), options);
    return { actionType: type, summary: `${type}: ${path}`, targets: [{ path, absentKind }] };
  }
  const source = resolveActionPath(field(type, payload, ["source", "path"]), options);
  const destination = resolveActionPath(field(type, payload, ["destination"]), options);
  const summary = `${type}: ${source} -> ${destination}`;
  const paths = type === "copy_file" ? [destination] : [source, destination];
  const unique = [...new Set(paths)];
  return { actionType: type, summary, targets: unique.map((path) => ({ path, absentKind })) };
}

/**
 * Resolves a path from an action against the workspace: relative paths against the root,
 * absolute ones as they are; `..` is allowed while the result stays inside. Pure.
 *
 * @param input The path as the action gave it.
 * @param options The workspace root and data folder.
 * @returns The normalized workspace-relative path.
 * @throws {PathError} When it resolves outside the workspace, to the root itself, or into the data folder.
 */
export function resolveActionPath(input: string, options: ResolveOptions): string {
  if (typeof input !== "string") throw new PathError(String(input), "not a string");
  if (input.includes("\0")) throw new PathError(input, "contains a NUL byte");
  const root = posix.resolve(options.root);
  const relative = posix.relative(root, posix.resolve(root, input));
  if (relative === "..") throw new PathError(input, `resolves outside the workspace "${root}"`);
  if (relative.startsWith("../") || isAbsolute(relative)) {
    throw new PathError(input, `resolves outside the workspace "${root}"`);
  }
  if (relative === "") throw new PathError(input, "is the workspace root itself");
  return normalizeWorkspacePath(relative, { dataDir: options.dataDir });
}

/**
 * Chronicle's data folder as the snapshot engine refuses it: relative to the workspace
 * root when it lies inside, `undefined` when it is the root itself or outside (then no
 * workspace path can reach it). Pure.
 *
 * @param root Absolute workspace root.
 * @param dataDir Absolute data folder.
 * @returns The workspace-relative data folder, or `undefined`.
 *
 * @example
 * ```ts
 * import { dataDirWithin } from "./affected_paths.ts";
 * if (dataDirWithin("/ws", "/ws/.chronicle") !== ".chronicle") throw new Error("inside");
 * if (dataDirWithin("/ws", "/data") !== undefined) throw new Error("outside");
 * ```
 */
export function dataDirWithin(root: string, dataDir: string): string | undefined {
  const inside = posix.relative(root, dataDir);
  return inside !== "" && !inside.startsWith("..") && !inside.startsWith("/") ? inside : undefined;
}

/** Whether `type` is one of {@linkcode SNAPSHOT_ACTION_TYPES}. */
export function isSnapshotActionType(type: string): type is SnapshotActionType {
  return (SNAPSHOT_ACTION_TYPES as readonly string[]).includes(type);
}

function field(type: string, payload: Record<string, unknown>, names: string[]): string {
  for (const name of names) {
    const value = payload[name];
    if (value === undefined) continue;
    if (typeof value !== "string") {
      throw new TypeError(`Action "${type}" needs "${name}" to be a string, not ${typeof value}`);
    }
    return value;
  }
  throw new TypeError(`Action "${type}" needs a "${names[0]}" string in its payload`);
}
