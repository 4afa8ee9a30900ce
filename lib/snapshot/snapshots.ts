import { join, resolve } from "node:path";
import { type Cas, HashPrefixSet } from "../cas/mod.ts";
import { ORIGINS, type Store } from "../store/mod.ts";
import { affectedPaths, type CaptureTarget, dataDirWithin } from "./affected_paths.ts";
import { captureTargets, casSink } from "./capture.ts";
import { appendSnapshot, type ChainOptions, pruneNow } from "./chain.ts";
import { diffFiles } from "./change_plan.ts";
import { DEFAULT_SNAPSHOT_CONFIG, validateSnapshotConfig } from "./config.ts";
import { newestOf } from "./lookup.ts";
import type { RestorePoint } from "./restore_point.ts";
import { SnapshotRecords } from "./snapshot_records.ts";
import type {
  Action,
  ContentOwner,
  RestorePlan,
  RollbackResult,
  SnapshotConfig,
  SnapshotDiff,
  SnapshotRecord,
  Transaction,
  TransactionStatus,
  WorkspaceWriter,
} from "./types.ts";
import {
  captureNow,
  planRestoreFrom,
  type RestoreResult,
  restoreTo,
  type UndoContext,
  undoTo,
  undoTransaction,
  undoWriter,
} from "./undo.ts";
import { type VerifyReport, verifySnapshots } from "./verify_snapshots.ts";

import type {
  ListSnapshotsOptions,
  SnapshotOptions,
  SnapshotsOptions,
  TransactionRollbackResult,
  UndoOptions,
} from "./snapshots_options.ts";

const DEFAULT_ORPHAN_GRACE_MS = 3_600_000;

/**
 * Pre-action snapshots of a workspace: before an agent's destructive action, what it will
 * change is captured (content in the CAS, metadata in SQLite), linked into a hash chain,
 * and can be diffed against now, rolled back (itself undoable), grouped into
 * transactions, and pruned by retention. Also restores the workspace to any moment of the
 * iteration store.
 *
 * Safe to use from several processes on one database: appending reads the chain's head
 * inside `BEGIN IMMEDIATE`, so the chain never forks.
 *
 * See the module documentation (`mod.ts`) for an example, and `README.md` beside this file
 * for the chain's encoding and what `verify()` detects.
 */
export class Snapshots {
  /** Absolute, real workspace root. */
  readonly root: string;
  /** Retention limits in force. */
  readonly config: SnapshotConfig;
  readonly #records: SnapshotRecords;
  readonly #cas: Cas;
  readonly #store: Store | undefined;
  readonly #writer: WorkspaceWriter;
  readonly #dataDir: string | undefined;
  readonly #offTheRecord: boolean;
  readonly #origin: string | undefined;
  readonly #clock: () => number;
  readonly #afterCapture: SnapshotsOptions["afterCapture"];
  readonly #chain: ChainOptions;

  private constructor(options: SnapshotsOptions, root: string, records: SnapshotRecords) {
    this.root = root;
    this.#records = records;
    this.#cas = options.cas;
    this.#store = options.store;
    this.#dataDir = dataDirWithin(
      root,
      realPathOr(resolve(options.dataDir ?? join(root, ".chronicle"))),
    );
    this.config = validateSnapshotConfig(
      {
        max_snapshots: options.config?.maxSnapshots,
        max_age_days: options.config?.maxAgeDays,
      },
      "snapshot options",
      DEFAULT_SNAPSHOT_CONFIG,
    );
    this.#offTheRecord = options.offTheRecord ?? false;
    this.#origin = options.origin;
    this.#clock = options.clock ?? Date.now;
    this.#afterCapture = options.afterCapture;
    this.#writer = undoWriter(root, this.#dataDir, options);
    this.#chain = { clock: this.#clock, config: this.config };
  }

  /**
   * Opens the snapshot engine of a workspace, creating its tables if needed.
   *
   * @param options The workspace, its database (or store) and CAS, and the settings.
   * @returns The engine.
   * @throws {TypeError} When neither `db` nor `store` is given.
   * @throws {RangeError} When a retention limit is out of range.
   * @throws {DatabaseError} When the database holds a newer snapshot schema.
   * @throws {Deno.errors.NotFound} When the workspace folder does not exist.
   */
  static open(options: SnapshotsOptions): Snapshots {
    const db = options.db ?? options.store?.db;
    if (!db) throw new TypeError("Snapshots.open needs a database: give `db` or `store`");
    const root = Deno.realPathSync(resolve(options.root));
    return new Snapshots(options, root, SnapshotRecords.open(db));
  }

  /** Whether snapshots are off the record (none are taken). */
  get offTheRecord(): boolean {
    return this.#offTheRecord;
  }

  /**
   * Captures what `action` is about to change and records it as the chain's next snapshot,
   * then prunes by retention. Reads and actions that change no files give `null`, and so
   * does off-the-record mode. Nothing is recorded when any path fails to be captured.
   *
   * @param action The action about to run.
   * @param options A transaction to join, or off the record.
   * @returns The snapshot, or `null` when none was taken.
   * @throws {PathError} When a path resolves outside the workspace or into the data folder.
   * @throws {TypeError} When a path field is missing.
   * @throws {CaptureError} When a path cannot be captured.
   * @throws {UnknownIdError | AmbiguousIdError | TransactionStateError} For a bad transaction.
   */
  async snapshot(action: Action, options: SnapshotOptions = {}): Promise<SnapshotRecord | null> {
    if (this.#offTheRecord || options.offTheRecord) return null;
    const decided = affectedPaths(action, { root: this.root, dataDir: this.#dataDir });
    if (!decided) return null;
    let transactionId: string | null = null;
    if (options.transactionId) {
      transactionId = this.#records.resolveId("transaction", options.transactionId);
      this.#records.requireActive(transactionId, "add a snapshot to");
    }
    return await this.#take(decided.actionType, decided.summary, decided.targets, transactionId);
  }

  /**
   * Every retained snapshot, oldest first.
   *
   * @param options A transaction to filter by, or a limit.
   * @returns The snapshots with their files.
   */
  list(options: ListSnapshotsOptions = {}): SnapshotRecord[] {
    const transactionId = options.transactionId === undefined
      ? undefined
      : this.#records.resolveId("transaction", options.transactionId);
    return newestOf(this.#records.snapshots(transactionId), options.limit);
  }

  /**
   * One snapshot by ID or unique ID prefix (at least 4 characters).
   *
   * @throws {UnknownIdError} When none matches.
   * @throws {AmbiguousIdError} When several match.
   * @throws {RangeError} When the prefix is too short or not hex.
   */
  get(id: string): SnapshotRecord {
    return this.#records.snapshot(this.#records.resolveId("snapshot", id));
  }

  /**
   * The changes between a snapshot and the workspace now (content is hashed, not stored).
   *
   * @param id Snapshot ID or unique prefix.
   * @returns Created, modified and deleted paths beneath what the snapshot captured.
   */
  async diff(id: string): Promise<SnapshotDiff> {
    const record = this.get(id);
    const now = await captureNow({ root: this.root, dataDir: this.#dataDir }, record.files);
    return {
      snapshotId: record.id,
      computedAt: this.#clock(),
      changes: diffFiles(record.files, now),
    };
  }

  /**
   * Puts every path a snapshot captured back as it was: files and links rewritten
   * atomically, paths that did not exist removed, folders recreated with their modes.
   * First snapshots the current state of the same paths (action type `rollback`), so the
   * rollback can itself be rolled back.
   *
   * @param id Snapshot ID or unique prefix.
   * @param options Off the record: no snapshot of the state before.
   * @returns The snapshot taken before, the steps applied and any problems.
   * @throws {SnapshotContentError} When content the rollback needs is missing (nothing is changed).
   */
  async rollback(id: string, options: UndoOptions = {}): Promise<RollbackResult> {
    const record = this.get(id);
    return await undoTo(
      this.#undoContext(ORIGINS.rollback, options),
      record.files,
      [record.id],
      "rollback",
      `rollback: ${record.id}`,
    );
  }

  /**
   * Verifies the chain (every hash, every link, head and anchor, see
   * {@linkcode verifyChain}) and, unless `content` is false, reads back every content
   * object the snapshots reference and checks it against its hash.
   *
   * @param options Whether to check content. @default {{ content: true }}
   * @returns The report; `ok` is false when anything is wrong.
   * @throws {DatabaseError} When the snapshot tables cannot be read (never a pass).
   */
  async verify(options: { content?: boolean } = {}): Promise<VerifyReport> {
    return await verifySnapshots(this.#records, this.#cas, options);
  }

  /**
   * Starts a transaction: snapshots taken with its ID join it, and it is then committed
   * or rolled back as one.
   *
   * @returns The new, active transaction.
   */
  beginTransaction(): Transaction {
    const id = crypto.randomUUID();
    this.#records.insertTransaction(id, this.#clock());
    return this.transaction(id);
  }

  /**
   * Commits an active transaction: it takes no more snapshots, and its snapshots may be pruned.
   *
   * @param id Transaction ID or unique prefix.
   * @returns The committed transaction.
   * @throws {TransactionStateError} When it is not active.
   */
  commit(id: string): Transaction {
    const full = this.#records.resolveId("transaction", id);
    this.#records.write(() => {
      this.#finish(full, "committed", "commit");
    });
    return this.transaction(full);
  }

  /**
   * Rolls back an active transaction in one step: its snapshots are undone newest first
   * (each path ends as the oldest snapshot that captured it had it), after one snapshot
   * of the current state (action type `rollback_transaction`), so it can be undone too.
   * The transaction becomes `rolled_back` when every step succeeded; otherwise it stays
   * active and the problems are returned.
   *
   * @param id Transaction ID or unique prefix.
   * @param options Off the record: no snapshot of the state before.
   * @throws {TransactionStateError} When it is not active.
   * @throws {SnapshotContentError} When needed content is missing (nothing is changed).
   */
  async rollbackTransaction(
    id: string,
    options: UndoOptions = {},
  ): Promise<TransactionRollbackResult> {
    const transactionId = this.#records.resolveId("transaction", id);
    this.#records.requireActive(transactionId, "roll back");
    const result = await undoTransaction(
      this.#undoContext(ORIGINS.rollback, options),
      transactionId,
      this.list({ transactionId }),
    );
    if (result.problems.length === 0) {
      this.#records.write(() => {
        this.#finish(transactionId, "rolled_back", "roll back");
      });
    }
    return { ...result, transaction: this.transaction(transactionId) };
  }

  /**
   * One transaction by ID or unique prefix.
   *
   * @throws {UnknownIdError | AmbiguousIdError} When the ID does not name exactly one.
   */
  transaction(id: string): Transaction {
    return this.#records.transaction(this.#records.resolveId("transaction", id));
  }

  /** Every transaction, oldest first. */
  transactions(): Transaction[] {
    return this.#records.transactions();
  }

  /**
   * Every content hash a retained snapshot references, so a workspace-wide CAS sweep
   * keeps it.
   */
  referencedHashes(): Set<string> {
    return this.#records.referencedHashes();
  }

  /**
   * Removes CAS objects nobody references: neither `owner` (the iteration store) nor a
   * retained snapshot. Content written within `graceMs` is kept, so a capture still in
   * progress in another process (content stored, snapshot not yet recorded) loses nothing;
   * what a crash left between capture and record is removed once older than that.
   *
   * @param owner The other referrer of content, e.g. the `Store`.
   * @param options How recent content must be to be kept regardless. @default {{ graceMs: 3600000 }}
   * @returns What the sweep removed.
   */
  async cleanOrphans(
    owner: ContentOwner,
    options: { graceMs?: number } = {},
  ): Promise<{ removedObjects: number; removedBytes: number }> {
    // Take the cutoff before the keep set, so content stored meanwhile survives.
    const keepNewerThan = Date.now() - (options.graceMs ?? DEFAULT_ORPHAN_GRACE_MS);
    // Prefixes, not strings: on a large store this holds 100,000 hashes while the sweep
    // walks the CAS (a wrong "yes" only keeps an object: see HashPrefixSet).
    const keep = new HashPrefixSet();
    owner.addHashesTo(keep);
    this.#records.addReferencedHashes(keep);
    return await this.#cas.sweep(keep, { keepNewerThan });
  }

  /**
   * Prunes by retention now (it also runs after every new snapshot).
   *
   * @returns How many snapshots were pruned.
   */
  prune(): number {
    return pruneNow(this.#records, this.#chain);
  }

  /**
   * Plans a point-in-time restore from the iteration store: what changes to bring the
   * workspace (or `paths`) back to how it was at a sequence or time. Changes nothing.
   *
   * @param point A store sequence, or a time (the last sequence recorded at or before it).
   * @param paths Only these paths and what lies beneath them.
   * @returns The plan.
   * @throws {TypeError} Without a store.
   * @throws {RangeError} For a sequence beyond the store's newest.
   */
  restorePlan(point: RestorePoint, paths: readonly string[] = []): RestorePlan {
    return planRestoreFrom(this.#requireStore(), point, paths, {
      root: this.root,
      dataDir: this.#dataDir,
    });
  }

  /**
   * Carries out a restore plan: old content written back as new iterations, later paths
   * removed, after one snapshot of the paths it changes (action type `restore`).
   *
   * @param plan From {@linkcode Snapshots.restorePlan}.
   * @param options Off the record: no snapshot of the state before.
   * @returns What was done.
   * @throws {SnapshotContentError} When old content is missing from the CAS (nothing is changed).
   */
  async restoreTo(plan: RestorePlan, options: UndoOptions = {}): Promise<RestoreResult> {
    this.#requireStore();
    return await restoreTo(this.#undoContext(ORIGINS.restore, options), plan);
  }

  // --- internals -------------------------------------------------------------------------

  /** Captures `targets` into the CAS and records them as the chain's next snapshot. */
  async #take(
    actionType: string,
    summary: string,
    targets: readonly CaptureTarget[],
    transactionId: string | null,
  ): Promise<SnapshotRecord> {
    const files = await captureTargets(targets, {
      root: this.root,
      dataDir: this.#dataDir,
      sink: casSink(this.#cas),
    });
    await this.#afterCapture?.(files);
    return appendSnapshot(
      this.#records,
      { actionType, summary, transactionId, files },
      this.#chain,
    );
  }

  /** What rollback and restore work with; `origin` unless the engine was given one. */
  #undoContext(origin: string, options: UndoOptions): UndoContext {
    const offTheRecord = this.#offTheRecord || options.offTheRecord;
    return {
      root: this.root,
      dataDir: this.#dataDir,
      cas: this.#cas,
      writer: this.#writer,
      origin: this.#origin ?? origin,
      snapshotBefore: offTheRecord
        ? null
        : (actionType, summary, targets) => this.#take(actionType, summary, targets, null),
    };
  }

  #finish(id: string, status: TransactionStatus, wanted: string): void {
    this.#records.requireActive(id, wanted);
    this.#records.finishTransaction(id, status, this.#clock());
  }

  #requireStore(): Store {
    if (!this.#store) throw new TypeError("Point-in-time restore needs the iteration store");
    return this.#store;
  }
}

function realPathOr(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return path;
  }
}
