/**
 * A workspace under Chronicle: capture of changes from the disk (initial scan, then a
 * debounced watcher) and the write-through API that changes files atomically and records
 * each change exactly once.
 *
 * @module
 */
export {
  type CaptureResult,
  type WatchOptions,
  Workspace,
  type WorkspaceOptions,
  type WriteOptions,
} from "./workspace.ts";
export {
  DEFAULT_DATA_DIR,
  type LayoutOptions,
  resolveLayout,
  type WorkspaceLayout,
} from "./layout.ts";
export { type CapturePlan, planCapture, RACY_WINDOW_MS } from "./plan_capture.ts";
export { Debouncer } from "./debouncer.ts";
