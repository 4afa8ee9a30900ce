/**
 * Replication between a master (the agent host's Chronicle) and its replicas (sandboxes):
 * push of every new iteration, content fetch, acknowledgements, heartbeats, catch-up and
 * full resync, write-back of local changes with causal conflict detection, and barriers
 * (docs/PROTOCOL.md §3–§7).
 *
 * Who owns what:
 *
 * | layer | owns |
 * | --- | --- |
 * | `transports/` | bytes on sockets: one `Transport` over a Unix socket or a WebSocket |
 * | `master.ts`, `master_session.ts`, `push_channel.ts` | listeners, one session and push channel per replica, content answers |
 * | `session_state.ts`, `channel_state.ts` | the master's per-connection protocol state: pure state machines |
 * | `writeback_applier.ts`, `write_back_decision.ts`, `writeback_facts.ts`, `writeback_outcomes.ts` | the master's verdict on each write-back entry, and its application |
 * | `master_state.ts` | the master's durable records: acked sequences, write-back outcomes |
 * | `replica.ts`, `replica_core.ts` | a replica's handle and connect loop, and what it keeps across connections |
 * | `replica_session.ts`, `replica_state.ts`, `replica_executor.ts` | one replica connection: its driver (`step()`, an injectable clock), its pure state machine, and the executor of its actions |
 * | `replica_apply.ts`, `replica_resync.ts`, `apply_decision.ts`, `content_fetcher.ts`, `content_groups.ts` | applying master versions on a replica, a resync's sweep, fetching content |
 * | `master_content_tier.ts` | a sandbox replica's reads of the master's content it keeps no copy of |
 * | `write_journal.ts`, `journal_plan.ts`, `writeback_loop.ts` | journaling local changes and sending them back |
 * | `replica_paths.ts`, `conflict_log.ts` | the replica's durable per-path view of the master, and its conflicts |
 *
 * Decisions are pure functions tested by tables: {@linkcode decideCatchup},
 * {@linkcode decideWriteBack}, {@linkcode decideApply}, {@linkcode planJournalEntries}; the
 * master's per-connection protocol state is a pure state machine too (`session_state.ts`,
 * `channel_state.ts`), and so is a replica's (`replica_state.ts`).
 *
 * @example A master and a replica in one process
 * ```ts ignore
 * const master = await startMaster({ workspace: agentWorkspace, socketPath: "/tmp/c.sock" });
 * const replica = await startReplica({ workspace: sandboxWorkspace, connect: "/tmp/c.sock" });
 * await replica.syncWait(10_000);
 * await replica.close();
 * await master.close();
 * ```
 *
 * @module
 */
export {
  HISTORY_FLOOR_META,
  type MasterHandle,
  type MasterOptions,
  type MasterStatus,
  type ReplicaSummary,
  startMaster,
} from "./master.ts";
export {
  type ReplicaHandle,
  type ReplicaMode,
  type ReplicaOptions,
  type ReplicaStatus,
  startReplica,
  type SyncWaitResult,
} from "./replica.ts";
export { type CatchupDecision, type CatchupFacts, decideCatchup } from "./catchup_decision.ts";
export {
  carriedNotifications,
  type CutBatch,
  type Sequenced,
  splitCutBatch,
} from "./carry_decision.ts";
export {
  decideWriteBack,
  entryPaths,
  type LaterIteration,
  reasonWord,
  type RejectReason,
  type WriteBackFacts,
  type WriteBackPathFacts,
  type WriteBackVerdict,
} from "./write_back_decision.ts";
export {
  type ApplyAction,
  type ApplyFacts,
  decideApply,
  type LocalVersion,
} from "./apply_decision.ts";
export {
  type CapturedChange,
  type JournalPlanContext,
  planJournalEntries,
} from "./journal_plan.ts";
export {
  type JournalEntry,
  type JournalOperation,
  type JournalState,
  type NewJournalEntry,
  WriteJournal,
} from "./write_journal.ts";
export type { PendingRemovals } from "./removal_hold.ts";
export { type Conflict, ConflictLog } from "./conflict_log.ts";
export { HeldByMasterError } from "./master_content_tier.ts";
export type { KeptRejection } from "./kept_rejection.ts";
export {
  keptConflictHashes,
  type MasterConflict,
  MasterConflicts,
  type NewMasterConflict,
} from "./master_conflicts.ts";
export {
  type ConflictChoice,
  isConflictChoice,
  MERGE_ORIGIN,
  resolveConflict,
  type ResolveContext,
  ResolveError,
  type ResolveOutcome,
} from "./resolve_conflict.ts";
export { type MasterVersion, ReplicaPaths, type ReplicaPathState } from "./replica_paths.ts";
export { openReplicaTables, type ReplicaTables } from "./replica_tables.ts";
export { PROBLEMS_KEPT } from "./replica_core.ts";
export { MAX_SANDBOX_ID_BYTES, sandboxIdProblem, validateSandboxId } from "./sandbox_id.ts";
export {
  type AppliedContent,
  MasterState,
  type ReplicaRecord,
  type WriteBackOutcome,
} from "./master_state.ts";
export { ApplyIntents, type IntendedWrite } from "./apply_intents.ts";
export { INLINE_LIMIT, notificationFor } from "./notification_source.ts";
export { answerContentFetch } from "./content_answer.ts";
export { diskMatches, type ExpectedState } from "./disk_check.ts";
export * from "./transports/mod.ts";
/** The clock a master's sessions run on (`MasterOptions.clock`), from `lib/concurrency`. */
export type { Clock, Timers } from "../concurrency/mod.ts";
