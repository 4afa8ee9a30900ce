/**
 * Workspace paths: the one place that decides which relative paths are safe to store,
 * send and write (PROTOCOL.md §7). Pure.
 *
 * @module
 */
export {
  ancestorsOf,
  isInside,
  type NormalizeOptions,
  normalizeWorkspacePath,
  parentOf,
  PathError,
  wirePathProblem,
} from "./workspace_path.ts";
export { PathSet } from "./path_set.ts";
