import type { RestoreResult } from "./undo.ts";
import type { VerifyReport } from "./verify_snapshots.ts";
import type {
  ApplyResult,
  CapturedFile,
  RestorePlan,
  SnapshotDiff,
  SnapshotRecord,
  Transaction,
} from "./types.ts";

/** A JSON object as the REST API and `--json` output write it (snake_case keys). */
export type JsonObject = Record<string, unknown>;

/**
 * A snapshot as JSON: `id`, `number`, `timestamp` (epoch ms), `action_type`, `summary`,
 * `transaction_id`, `previous_hash`, `hash`, and `files` (`path`, `state`, `kind`, `hash`,
 * `size`, `mode`).
 *
 * @param record The snapshot.
 * @returns Its JSON form.
 */
export function snapshotToJson(record: SnapshotRecord): JsonObject {
  return {
    id: record.id,
    number: record.number,
    timestamp: record.timestamp,
    action_type: record.actionType,
    summary: record.summary,
    transaction_id: record.transactionId,
    previous_hash: record.previousHash,
    hash: record.hash,
    files: record.files.map(fileToJson),
  };
}

/**
 * A diff as JSON: `snapshot_id`, `computed_at`, and `changes` (`path`, `change_type`,
 * `kind`, `before_hash`, `after_hash`, `before_size`, `after_size`, `before_mode`,
 * `after_mode`; `null` where a side does not exist).
 *
 * @param diff The diff.
 * @returns Its JSON form.
 */
export function diffToJson(diff: SnapshotDiff): JsonObject {
  return {
    snapshot_id: diff.snapshotId,
    computed_at: diff.computedAt,
    changes: diff.changes.map((change) => ({
      path: change.path,
      change_type: change.change,
      kind: change.kind,
      before_hash: change.beforeHash,
      after_hash: change.afterHash,
      before_size: change.beforeSize,
      after_size: change.afterSize,
      before_mode: change.beforeMode,
      after_mode: change.afterMode,
    })),
  };
}

/**
 * A transaction as JSON: `id`, `status`, `started_at`, `finished_at`, `snapshots` (IDs).
 *
 * @param transaction The transaction.
 * @returns Its JSON form.
 */
export function transactionToJson(transaction: Transaction): JsonObject {
  return {
    id: transaction.id,
    status: transaction.status,
    started_at: transaction.startedAt,
    finished_at: transaction.finishedAt,
    snapshots: transaction.snapshots,
  };
}

/**
 * A verification report as JSON: `ok`, `snapshots`, `content_checked`, `head`
 * (`head_number`, `head_hash`, `anchor_number`, `anchor_hash`), `problems` (`kind`,
 * `number`, `message`).
 *
 * @param report The report.
 * @returns Its JSON form.
 */
export function verifyReportToJson(report: VerifyReport): JsonObject {
  return {
    ok: report.ok,
    snapshots: report.snapshots,
    content_checked: report.contentChecked,
    head: {
      head_number: report.head.headNumber,
      head_hash: report.head.headHash,
      anchor_number: report.head.anchorNumber,
      anchor_hash: report.head.anchorHash,
    },
    problems: report.problems.map((problem) => ({
      kind: problem.kind,
      number: problem.number ?? null,
      message: problem.message,
    })),
  };
}

/**
 * What a rollback did, as JSON: `snapshot` (taken before, or `null`), `applied` (steps:
 * `op`, `path`, …) and `problems` (`path`, `message`); `transaction` when there is one.
 *
 * @param result The rollback's result.
 * @returns Its JSON form.
 */
export function rollbackResultToJson(
  result: ApplyResult & { snapshot: SnapshotRecord | null; transaction?: Transaction },
): JsonObject {
  return {
    ...(result.transaction ? { transaction: transactionToJson(result.transaction) } : {}),
    snapshot: result.snapshot ? snapshotToJson(result.snapshot) : null,
    applied: result.applied,
    problems: result.problems,
  };
}

/**
 * A restore plan as JSON: `sequence` and `changes` (`path`, `action`, `before`, `after`).
 *
 * @param plan The plan.
 * @returns Its JSON form.
 */
export function restorePlanToJson(plan: RestorePlan): JsonObject {
  return { sequence: plan.sequence, changes: plan.changes };
}

/**
 * What a restore did, as JSON: the plan's fields, `snapshot`, `applied` (paths), `problems`.
 *
 * @param result The restore's result.
 * @returns Its JSON form.
 */
export function restoreResultToJson(result: RestoreResult): JsonObject {
  return {
    ...restorePlanToJson(result.plan),
    snapshot: result.snapshot ? snapshotToJson(result.snapshot) : null,
    applied: result.applied,
    problems: result.problems,
  };
}

function fileToJson(file: CapturedFile): JsonObject {
  return {
    path: file.path,
    state: file.state,
    kind: file.kind,
    hash: file.hash,
    size: file.size,
    mode: file.mode,
  };
}
