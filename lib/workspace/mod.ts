/**
 * A workspace under Chronicle: capture of changes from the disk (initial scan, then a
 * debounced watcher) and the write-through API that changes files atomically and records
 * each change exactly once.
 *
 * IMPORTANT for every component that needs to know about local changes (a replica's
 * write-back journal, local-sync): do not call `Deno.watchFs` on a workspace yourself.
 * Use `await workspace.watch({ debounceMs })` and `workspace.store.onRecorded(listener)`,
 * which reports every iteration recorded, with its origin (a replica's own applies carry
 * the master's, so they are told apart from local changes). A recursive `Deno.watchFs` over a
 * folder that contains the live SQLite database makes the process lose SQLite's file
 * locks (see `tree_watcher.ts`), and other processes then delete the WAL it writes to.
 *
 * @module
 */
export { Workspace } from "./workspace.ts";
export {
  type ApplyChangesOptions,
  type ApplyChangesResult,
  type CaptureResult,
  FolderNotEmptyError,
  type MoveOptions,
  type ScanOptions,
  type ScanResult,
  type WatchOptions,
  type WorkspaceChange,
  WorkspaceGoneError,
  type WorkspaceOptions,
  type WriteOptions,
} from "./workspace_types.ts";
export {
  DEFAULT_DATA_DIR,
  type LayoutOptions,
  resolveLayout,
  type WorkspaceLayout,
} from "./layout.ts";
export {
  type CapturePlan,
  FOLDER_HASH,
  planCapture,
  RACY_WINDOW_MS,
  type SeenFile,
} from "./plan_capture.ts";
export { Debouncer } from "./debouncer.ts";
export { type TreeEventAction, treeEventAction } from "./tree_events.ts";
export {
  HELD_BYTES_MAX,
  HELD_PATHS_MAX,
  type LossAction,
  type LossInput,
  type LossState,
  nextLossState,
  NO_LOSS,
} from "./loss_order.ts";
export { ChangedOnDiskError, type DiskStamp } from "../disk/mod.ts";
export { type Observation, observePath } from "./file_observation.ts";
export {
  type CheckedFolders,
  type DiskHooks,
  type DiskOperation,
  ForbiddenWriteError,
  WorkspaceDisk,
  type WorkspaceDiskOptions,
} from "./workspace_disk.ts";
export {
  type BytesWriteInput,
  bytesWriteMode,
  CONTROL_FILES,
  DEFAULT_WRITEBACK_MODE_BITS,
  isControlFile,
  linkTargetProblem,
  maskMode,
} from "./write_rules.ts";
