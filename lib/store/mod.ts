/**
 * The versioned store: paths and their immutable iterations in SQLite.
 *
 * @module
 */
export { type FileState, isSameState, type LiveState } from "./rows.ts";
export {
  type FileStateChange,
  type ListOptions,
  type RecordListener,
  type RecordOptions,
  Store,
  WORKSPACE_ROOT_META,
} from "./store.ts";
export {
  isFolderMode,
  ORIGINS,
  RESERVED_ORIGINS,
  S_IFDIR,
  S_IFLNK,
  S_IFMT,
  S_IFREG,
} from "./types.ts";
export type { HashCollector, Iteration, NewIteration, Origin } from "./types.ts";
export {
  type FolderEntry,
  type FolderPage,
  folderPage,
  historyPage,
  listToDepth,
  MAX_PAGE,
  origins,
  searchPaths,
  timelineNewer,
  timelinePage,
  type TimelinePageOptions,
} from "./browse_queries.ts";
