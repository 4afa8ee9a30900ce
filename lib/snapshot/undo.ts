import type { Cas } from "../cas/mod.ts";
import type { Store } from "../store/mod.ts";
import { type CaptureTarget, resolveActionPath, type ResolveOptions } from "./affected_paths.ts";
import { applySteps } from "./apply_steps.ts";
import { captureTargets, HASH_ONLY_SINK } from "./capture.ts";
import { mergeForUndo, needsContent, planRollback, rootTargets } from "./change_plan.ts";
import { SnapshotContentError } from "./errors.ts";
import { DiskWriter } from "./disk_writer.ts";
import { planRestore, restoreStep, restoreTargets } from "./restore_plan.ts";
import type { RestorePoint } from "./restore_point.ts";
import type { SnapshotsOptions } from "./snapshots_options.ts";
import type {
  ApplyProblem,
  CapturedFile,
  RestorePlan,
  RollbackResult,
  SnapshotRecord,
  WorkspaceWriter,
} from "./types.ts";

/** What a point-in-time restore did. */
export interface RestoreResult {
  /** What the restore decided to change. */
  plan: RestorePlan;
  /** The snapshot of the changed paths just before; `null` off the record or when nothing changed. */
  snapshot: SnapshotRecord | null;
  /** Paths changed. */
  applied: string[];
  /** Paths that could not be changed, and why. */
  problems: ApplyProblem[];
}

/** Takes a snapshot of `targets` as they are now, recorded in the chain. */
export type SnapshotBefore = (
  actionType: string,
  summary: string,
  targets: readonly CaptureTarget[],
) => Promise<SnapshotRecord>;

/** What the rollback and restore executor changes the workspace with. */
export interface UndoContext {
  /** Absolute, real workspace root. */
  root: string;
  /** Chronicle's data folder relative to the root, never captured; `undefined` when outside. */
  dataDir: string | undefined;
  /** Where captured content is. */
  cas: Cas;
  /** How files and links are changed. */
  writer: WorkspaceWriter;
  /** The origin the writer records each change with. */
  origin: string;
  /** Snapshots the state before; `null` off the record (the change cannot be undone then). */
  snapshotBefore: SnapshotBefore | null;
}

/**
 * The current state of everything `files` covers (their roots captured again), hashed
 * but not stored.
 *
 * @param context The workspace root and data folder.
 * @param files Captured entries.
 * @returns The entries as they are now.
 */
export async function captureNow(
  context: Pick<UndoContext, "root" | "dataDir">,
  files: readonly CapturedFile[],
): Promise<CapturedFile[]> {
  return await captureTargets(rootTargets(files), {
    root: context.root,
    dataDir: context.dataDir,
    sink: HASH_ONLY_SINK,
  });
}

/**
 * Brings every path `desired` covers back to it: checks first that all the content it
 * needs is in the CAS, snapshots the current state (unless off the record), plans the
 * steps ({@linkcode planRollback}) and applies them, a problem per failed path.
 *
 * @param context The workspace, its writer and how to snapshot the state before.
 * @param desired The state to bring back.
 * @param sourceIds The snapshots `desired` comes from, for errors.
 * @param actionType The action type of the snapshot taken before.
 * @param summary Its summary.
 * @returns The snapshot taken before, the steps applied and any problems.
 * @throws {SnapshotContentError} When needed content is missing (nothing is changed).
 */
export async function undoTo(
  context: UndoContext,
  desired: readonly CapturedFile[],
  sourceIds: readonly string[],
  actionType: string,
  summary: string,
): Promise<RollbackResult> {
  for (const file of desired) {
    if (needsContent(file) && !(await context.cas.has(file.hash, { throughTier: true }))) {
      throw new SnapshotContentError(sourceIds.join(", "), file.path, file.hash, "missing");
    }
  }
  let snapshot: SnapshotRecord | null = null;
  let current: CapturedFile[];
  if (context.snapshotBefore === null) {
    current = await captureNow(context, desired);
  } else {
    snapshot = await context.snapshotBefore(actionType, summary, rootTargets(desired));
    current = snapshot.files;
  }
  const result = await applySteps(planRollback(desired, current), {
    root: context.root,
    writer: context.writer,
    origin: context.origin,
  });
  return { snapshot, ...result };
}

/**
 * Undoes a transaction's snapshots newest first as one step ({@linkcode mergeForUndo}:
 * each path ends as the oldest snapshot that captured it had it), after one snapshot of
 * the current state (action type `rollback_transaction`). Nothing to do without snapshots.
 *
 * @param context The workspace, its writer and how to snapshot the state before.
 * @param transactionId The transaction's full ID, for the summary.
 * @param snapshots Its snapshots, oldest first.
 * @returns The snapshot taken before, the steps applied and any problems.
 * @throws {SnapshotContentError} When needed content is missing (nothing is changed).
 */
export async function undoTransaction(
  context: UndoContext,
  transactionId: string,
  snapshots: readonly SnapshotRecord[],
): Promise<RollbackResult> {
  if (snapshots.length === 0) return { snapshot: null, applied: [], problems: [] };
  const newestFirst = [...snapshots].reverse();
  return await undoTo(
    context,
    mergeForUndo(newestFirst.map((record) => record.files)),
    newestFirst.map((record) => record.id),
    "rollback_transaction",
    `rollback_transaction: ${transactionId} (${snapshots.length} snapshots)`,
  );
}

/**
 * Plans a point-in-time restore from the iteration store ({@linkcode planRestore}): what
 * changes bring the workspace (or `paths`) back to how it was at a sequence or time.
 *
 * @param store The iteration store.
 * @param point A store sequence, or a time (the last sequence recorded at or before it).
 * @param paths Only these paths (as given) and what lies beneath them.
 * @param resolve The workspace root and data folder the paths resolve against.
 * @returns The plan.
 * @throws {RangeError} For a sequence beyond the store's newest.
 * @throws {PathError} For a path outside the workspace or in the data folder.
 */
export function planRestoreFrom(
  store: Store,
  point: RestorePoint,
  paths: readonly string[],
  resolve: ResolveOptions,
): RestorePlan {
  const newest = store.sequence();
  const sequence = "sequence" in point ? point.sequence : store.sequenceAt(point.timestamp);
  if (!Number.isSafeInteger(sequence) || sequence < 0 || sequence > newest) {
    throw new RangeError(`Sequence ${sequence} is not in the store (its newest is ${newest})`);
  }
  const resolved = paths.map((path) => resolveActionPath(path, resolve));
  return planRestore({
    sequence,
    then: store.list({ atSequence: sequence }),
    now: store.list(),
    paths: resolved,
  });
}

/**
 * Carries out a restore plan: checks first that all old content is in the CAS, snapshots
 * the paths it changes (action type `restore`, unless off the record), then writes old
 * content back and removes later paths.
 *
 * @param context The workspace, its writer and how to snapshot the state before.
 * @param plan The plan.
 * @returns What was done.
 * @throws {SnapshotContentError} When old content is missing (nothing is changed).
 */
export async function restoreTo(context: UndoContext, plan: RestorePlan): Promise<RestoreResult> {
  if (plan.changes.length === 0) return { plan, snapshot: null, applied: [], problems: [] };
  for (const change of plan.changes) {
    if (change.after && !(await context.cas.has(change.after.hash, { throughTier: true }))) {
      throw new SnapshotContentError(
        `sequence ${plan.sequence}`,
        change.path,
        change.after.hash,
        "missing",
      );
    }
  }
  const snapshot = context.snapshotBefore === null ? null : await context.snapshotBefore(
    "restore",
    `restore: to sequence ${plan.sequence} (${plan.changes.length} paths)`,
    restoreTargets(plan),
  );
  const { applied, problems } = await applySteps(plan.changes.map(restoreStep), {
    root: context.root,
    writer: context.writer,
    origin: context.origin,
  });
  return { plan, snapshot, applied: applied.map((step) => step.path), problems };
}

/**
 * The writer rollback and restore change files with: `options.writer`, else a
 * {@linkcode DiskWriter} recording into `options.store`; paths `options.ignores` matches go
 * to an unrecorded `DiskWriter` instead.
 *
 * @param root Absolute, real workspace root.
 * @param dataDir Chronicle's data folder relative to the root, or `undefined`.
 * @param options The engine's options.
 * @returns The writer.
 */
export function undoWriter(
  root: string,
  dataDir: string | undefined,
  options: Pick<SnapshotsOptions, "cas" | "writer" | "store" | "origin" | "ignores">,
): WorkspaceWriter {
  const writer = options.writer ??
    new DiskWriter(root, options.cas, {
      dataDir,
      store: options.store,
      ...(options.origin === undefined ? {} : { origin: options.origin }),
    });
  const ignores = options.ignores;
  return ignores
    ? routedWriter(writer, new DiskWriter(root, options.cas, { dataDir }), ignores)
    : writer;
}

/**
 * A writer that sends the paths `ignores` matches to `unrecorded`, the others to
 * `writer` (so rollback still restores ignored paths, directly on disk).
 *
 * @param writer The usual writer, which records each change.
 * @param unrecorded The writer for ignored paths.
 * @param ignores Whether a workspace path is ignored.
 * @returns The combined writer.
 */
export function routedWriter(
  writer: WorkspaceWriter,
  unrecorded: WorkspaceWriter,
  ignores: (path: string) => boolean,
): WorkspaceWriter {
  const pick = (path: string) => ignores(path) ? unrecorded : writer;
  return {
    writeContent: (path, hash, mode, options) => pick(path).writeContent(path, hash, mode, options),
    writeBytes: (path, bytes, options) => pick(path).writeBytes(path, bytes, options),
    remove: (path, options) => pick(path).remove(path, options),
    move: (from, to, options) => pick(from).move(from, to, options),
  };
}
