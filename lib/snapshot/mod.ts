/**
 * Pre-action snapshots: before an agent's destructive action, Chronicle captures what the
 * action will change (content in the CAS, metadata in SQLite), links it into a
 * tamper-evident hash chain, and can show the diff against now, roll it back (the
 * rollback itself undoable), group snapshots into transactions, prune by retention, and
 * restore the workspace to any moment of the iteration store. See `README.md` beside this
 * file for the chain's canonical encoding.
 *
 * @example Undoing a write
 * ```ts
 * import { Cas } from "../cas/mod.ts";
 * import { Store } from "../store/mod.ts";
 * import { Snapshots } from "./mod.ts";
 * const root = await Deno.realPath(await Deno.makeTempDir());
 * await Deno.mkdir(`${root}/.chronicle`);
 * const store = Store.open(`${root}/.chronicle/chronicle.db`);
 * try {
 *   const cas = await Cas.open(`${root}/.chronicle/cas`);
 *   const snapshots = Snapshots.open({ root, store, cas });
 *   await Deno.writeTextFile(`${root}/a.txt`, "good");
 *   const snap = await snapshots.snapshot({ type: "write_file", payload: { path: "a.txt" } });
 *   await Deno.writeTextFile(`${root}/a.txt`, "broken");
 *   await snapshots.rollback(snap!.id);
 *   if (await Deno.readTextFile(`${root}/a.txt`) !== "good") throw new Error("not rolled back");
 * } finally {
 *   store.close();
 *   await Deno.remove(root, { recursive: true });
 * }
 * ```
 *
 * @module
 */
export { Snapshots } from "./snapshots.ts";
export type {
  ListSnapshotsOptions,
  SnapshotOptions,
  SnapshotsOptions,
  TransactionRollbackResult,
  UndoOptions,
} from "./snapshots_options.ts";
export type { RestoreResult } from "./undo.ts";
export type { VerifyReport } from "./verify_snapshots.ts";
export {
  type AffectedPaths,
  affectedPaths,
  type CaptureTarget,
  isSnapshotActionType,
  resolveActionPath,
  type ResolveOptions,
} from "./affected_paths.ts";
export {
  type ChainHead,
  comparePaths,
  encodeSnapshot,
  type HashedFields,
  HEAD_ENCODING_TAG,
  headSeal,
  SNAPSHOT_ENCODING_TAG,
  snapshotHash,
  sortFiles,
} from "./canonical_encoding.ts";
export {
  type IntegrityProblem,
  type IntegrityProblemKind,
  type StoredHead,
  verifyChain,
} from "./verify_chain.ts";
export { planPrune, type PruneCandidate, type PruneInput } from "./retention.ts";
export {
  DEFAULT_SNAPSHOT_CONFIG,
  loadSnapshotConfig,
  type LoadSnapshotConfigOptions,
  MAX_AGE_DAYS_LIMIT,
  MAX_SNAPSHOTS_LIMIT,
  parseSnapshotConfig,
  type RawSnapshotConfig,
  validateSnapshotConfig,
} from "./config.ts";
export { diffFiles, mergeForUndo, planRollback, rootsOf } from "./change_plan.ts";
export { planRestore, type RestoreInput } from "./restore_plan.ts";
export { parseRestorePoint, type RestorePoint } from "./restore_point.ts";
export {
  type CaptureOptions,
  captureTargets,
  casSink,
  type ContentSink,
  HASH_ONLY_SINK,
} from "./capture.ts";
export { type ApplyOptions, applySteps } from "./apply_steps.ts";
export { DiskWriter, type DiskWriterOptions } from "./disk_writer.ts";
export {
  AmbiguousIdError,
  CaptureError,
  type IdKind,
  SnapshotContentError,
  TransactionStateError,
  UnknownIdError,
} from "./errors.ts";
export {
  diffToJson,
  type JsonObject,
  restorePlanToJson,
  restoreResultToJson,
  rollbackResultToJson,
  snapshotToJson,
  transactionToJson,
  verifyReportToJson,
} from "./json_view.ts";
export {
  type Action,
  type ApplyProblem,
  type ApplyResult,
  type ApplyStep,
  type CapturedFile,
  type ChangeType,
  type ContentOwner,
  type FileChange,
  type FileKind,
  type FileStateName,
  type RestoreChange,
  type RestorePlan,
  type RollbackResult,
  SNAPSHOT_ACTION_TYPES,
  type SnapshotActionType,
  type SnapshotConfig,
  type SnapshotDiff,
  type SnapshotRecord,
  type Transaction,
  type TransactionStatus,
  type WorkspaceWriter,
} from "./types.ts";
export { openWorkspaceSnapshots, type WorkspaceSnapshotsOptions } from "./workspace_snapshots.ts";
