import { join, relative, resolve } from "node:path";
import type { DatabaseSync, SQLInputValue, StatementSync } from "node:sqlite";
import { type Cas, ContentNotFoundError, CorruptContentError } from "../cas/mod.ts";
import {
  columns,
  DatabaseError,
  inTransaction,
  migrate,
  type Row,
  statementCache,
} from "../db/mod.ts";
import { errorMessage } from "../log/mod.ts";
import { ORIGINS, S_IFLNK, S_IFMT, type Store } from "../store/mod.ts";
import { affectedPaths, type CaptureTarget, resolveActionPath } from "./affected_paths.ts";
import { applySteps } from "./apply_steps.ts";
import { type ChainHead, headSeal, snapshotHash } from "./canonical_encoding.ts";
import { captureTargets, casSink, HASH_ONLY_SINK } from "./capture.ts";
import { diffFiles, mergeForUndo, planRollback, rootsOf } from "./change_plan.ts";
import { DEFAULT_SNAPSHOT_CONFIG, validateSnapshotConfig } from "./config.ts";
import { DiskWriter } from "./disk_writer.ts";
import {
  AmbiguousIdError,
  type IdKind,
  SnapshotContentError,
  TransactionStateError,
  UnknownIdError,
} from "./errors.ts";
import { ageCutoff, planPrune, type PruneCandidate } from "./retention.ts";
import { planRestore } from "./restore_plan.ts";
import type { RestorePoint } from "./restore_point.ts";
import { SNAPSHOT_MIGRATIONS } from "./schema.ts";
import type {
  Action,
  ApplyProblem,
  ApplyStep,
  CapturedFile,
  ContentOwner,
  FileKind,
  FileStateName,
  RestoreChange,
  RestorePlan,
  RollbackResult,
  SnapshotConfig,
  SnapshotDiff,
  SnapshotRecord,
  Transaction,
  TransactionStatus,
  WorkspaceWriter,
} from "./types.ts";
import { type IntegrityProblem, type StoredHead, verifyChain } from "./verify_chain.ts";

/** The values the snapshot tables' text columns may hold, checked as rows are read. */
const FILE_STATES: readonly FileStateName[] = ["present", "absent"];
const FILE_KINDS: readonly FileKind[] = ["file", "symlink", "dir"];
const TRANSACTION_STATUSES: readonly TransactionStatus[] = ["active", "committed", "rolled_back"];

/** Options for {@linkcode Snapshots.open}. */
export interface SnapshotsOptions {
  /** The workspace folder. */
  root: string;
  /** The content store where captured content goes (shared with the iteration store). */
  cas: Cas;
  /** The workspace's database. @default {store.db} */
  db?: DatabaseSync | undefined;
  /** The iteration store: needed for point-in-time restore, and records rollback changes. */
  store?: Store | undefined;
  /** How rollback and restore change files. @default {a DiskWriter recording into `store`} */
  writer?: WorkspaceWriter | undefined;
  /**
   * Paths the writer refuses to change (the workspace's ignore patterns): rollback changes
   * them directly on disk instead, unrecorded. @default {none}
   */
  ignores?: ((path: string) => boolean) | undefined;
  /** Chronicle's data folder, never captured. @default {`ROOT/.chronicle`} */
  dataDir?: string | undefined;
  /** Retention limits. @default {DEFAULT_SNAPSHOT_CONFIG} */
  config?: Partial<SnapshotConfig> | undefined;
  /** Off the record: take no snapshots at all (the seed's OTR mode). @default {false} */
  offTheRecord?: boolean | undefined;
  /**
   * Origin given to every rollback and restore change instead of the usual ones.
   * @default {"rollback" for a rollback, "restore" for a point-in-time restore}
   */
  origin?: string | undefined;
  /** The clock for timestamps and retention, epoch milliseconds. @default {Date.now} */
  clock?: (() => number) | undefined;
  /**
   * Fault injection for tests: called after content is captured into the CAS and before
   * the snapshot is recorded (a crash here must leave no snapshot).
   */
  afterCapture?: ((files: CapturedFile[]) => void | Promise<void>) | undefined;
}

/** Options of one {@linkcode Snapshots.snapshot} call. */
export interface SnapshotOptions {
  /** Add the snapshot to this active transaction (ID or unique prefix). */
  transactionId?: string | null | undefined;
  /** Skip this one snapshot (off the record). @default {false} */
  offTheRecord?: boolean | undefined;
}

/** Options of {@linkcode Snapshots.list}. */
export interface ListSnapshotsOptions {
  /** Only this transaction's snapshots (ID or unique prefix). */
  transactionId?: string | undefined;
  /** Only the newest this many (still listed oldest first). */
  limit?: number | undefined;
}

/** Options of {@linkcode Snapshots.rollback} and {@linkcode Snapshots.restoreTo}. */
export interface UndoOptions {
  /** Take no snapshot of the state before (the change cannot be undone then). @default {false} */
  offTheRecord?: boolean | undefined;
}

/** What {@linkcode Snapshots.verify} found. */
export interface VerifyReport {
  /** True when no problem was found. */
  ok: boolean;
  /** Snapshots checked. */
  snapshots: number;
  /** Distinct content objects read back and verified (0 when content was not checked). */
  contentChecked: number;
  /** The head record's fields. */
  head: ChainHead;
  /** What is wrong with the chain or its content; empty when it verified. */
  problems: IntegrityProblem[];
}

/** What a transaction rollback did. */
export interface TransactionRollbackResult extends RollbackResult {
  /** The transaction, as it stands after the rollback. */
  transaction: Transaction;
}

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

const SNAPSHOT_COLUMNS =
  "number, id, timestamp, action_type, summary, transaction_id, previous_hash, hash";
const ID_PREFIX = /^[0-9a-f-]{4,36}$/;
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
 */
export class Snapshots {
  /** Absolute, real workspace root. */
  readonly root: string;
  /** Retention limits in force. */
  readonly config: SnapshotConfig;
  readonly #db: DatabaseSync;
  readonly #cas: Cas;
  readonly #store: Store | undefined;
  readonly #writer: WorkspaceWriter;
  readonly #dataDir: string | undefined;
  readonly #offTheRecord: boolean;
  readonly #origin: string | undefined;
  readonly #clock: () => number;
  readonly #afterCapture: SnapshotsOptions["afterCapture"];
  readonly #statement: (sql: string) => StatementSync;

  private constructor(options: SnapshotsOptions, root: string, db: DatabaseSync) {
    this.root = root;
    this.#db = db;
    this.#statement = statementCache(db);
    this.#cas = options.cas;
    this.#store = options.store;
    const dataDir = realPathOr(resolve(options.dataDir ?? join(root, ".chronicle")));
    const inside = relative(root, dataDir);
    this.#dataDir = inside !== "" && !inside.startsWith("..") && !inside.startsWith("/")
      ? inside
      : undefined;
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
    const writer = options.writer ??
      new DiskWriter(root, options.cas, {
        dataDir: this.#dataDir,
        store: options.store,
        ...(options.origin === undefined ? {} : { origin: options.origin }),
      });
    const ignores = options.ignores;
    this.#writer = ignores
      ? routedWriter(writer, new DiskWriter(root, options.cas, { dataDir: this.#dataDir }), ignores)
      : writer;
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
    migrate(db, "snapshots", SNAPSHOT_MIGRATIONS);
    return new Snapshots(options, root, db);
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
      transactionId = this.#resolve("transaction", options.transactionId);
      this.#requireActive(transactionId, "add a snapshot to");
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
    let rows: Row[];
    if (options.transactionId !== undefined) {
      const id = this.#resolve("transaction", options.transactionId);
      rows = this.#all(
        `SELECT ${SNAPSHOT_COLUMNS} FROM snapshots WHERE transaction_id = ? ORDER BY number`,
        id,
      );
    } else {
      rows = this.#all(`SELECT ${SNAPSHOT_COLUMNS} FROM snapshots ORDER BY number`);
    }
    if (options.limit !== undefined && options.limit >= 0) {
      rows = rows.slice(Math.max(0, rows.length - options.limit));
    }
    return rows.map((row) => this.#toRecord(row));
  }

  /**
   * One snapshot by ID or unique ID prefix (at least 4 characters).
   *
   * @throws {UnknownIdError} When none matches.
   * @throws {AmbiguousIdError} When several match.
   * @throws {RangeError} When the prefix is too short or not hex.
   */
  get(id: string): SnapshotRecord {
    const full = this.#resolve("snapshot", id);
    const row = this.#one(`SELECT ${SNAPSHOT_COLUMNS} FROM snapshots WHERE id = ?`, full)!;
    return this.#toRecord(row);
  }

  /**
   * The changes between a snapshot and the workspace now (content is hashed, not stored).
   *
   * @param id Snapshot ID or unique prefix.
   * @returns Created, modified and deleted paths beneath what the snapshot captured.
   */
  async diff(id: string): Promise<SnapshotDiff> {
    const record = this.get(id);
    const now = await this.#capture(record.files);
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
    return await this.#undo(
      record.files,
      [record.id],
      "rollback",
      `rollback: ${record.id}`,
      options,
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
    let records: SnapshotRecord[];
    let head: StoredHead | undefined;
    let orphans: number;
    try {
      records = this.list();
      head = this.#readHead();
      orphans = columns(
        this.#one(
          "SELECT COUNT(*) AS n FROM snapshot_files WHERE snapshot_number NOT IN (SELECT number FROM snapshots)",
        )!,
      ).integer("n");
    } catch (error) {
      throw new DatabaseError(`Cannot read the snapshot chain: ${errorMessage(error)}`, {
        cause: error,
      });
    }
    const problems = verifyChain(records, head);
    if (orphans > 0) {
      problems.push({
        kind: "orphan_files",
        message: `${orphans} captured file rows belong to no snapshot (a snapshot was deleted)`,
      });
    }
    let contentChecked = 0;
    if (options.content !== false) {
      const users = new Map<string, string>();
      for (const record of records) {
        for (const file of record.files) {
          if (needsContent(file) && !users.has(file.hash)) {
            users.set(file.hash, `"${file.path}" in snapshot ${record.number}`);
          }
        }
      }
      for (const [hash, user] of users) {
        contentChecked++;
        const problem = await this.#checkContent(hash);
        if (problem === "missing") {
          problems.push({
            kind: "content_missing",
            message: `Content "${hash}" of ${user} is missing from the CAS`,
          });
        } else if (problem) {
          problems.push({
            kind: "content_corrupt",
            message: `Content "${hash}" of ${user} does not match its hash: ${problem}`,
          });
        }
      }
    }
    const fields = head ?? { headNumber: 0, headHash: "", anchorNumber: 0, anchorHash: "" };
    return {
      ok: problems.length === 0,
      snapshots: records.length,
      contentChecked,
      head: {
        headNumber: fields.headNumber,
        headHash: fields.headHash,
        anchorNumber: fields.anchorNumber,
        anchorHash: fields.anchorHash,
      },
      problems,
    };
  }

  /**
   * Starts a transaction: snapshots taken with its ID join it, and it is then committed
   * or rolled back as one.
   *
   * @returns The new, active transaction.
   */
  beginTransaction(): Transaction {
    const id = crypto.randomUUID();
    this.#run(
      "INSERT INTO snapshot_transactions (id, status, started_at, finished_at) VALUES (?, 'active', ?, NULL)",
      id,
      this.#clock(),
    );
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
    const full = this.#resolve("transaction", id);
    inTransaction(this.#db, () => {
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
    const transactionId = this.#resolve("transaction", id);
    this.#requireActive(transactionId, "roll back");
    const records = this.list({ transactionId });
    let result: RollbackResult = { snapshot: null, applied: [], problems: [] };
    if (records.length > 0) {
      const desired = mergeForUndo(records.reverse().map((record) => record.files));
      const summary = `rollback_transaction: ${transactionId} (${records.length} snapshots)`;
      result = await this.#undo(
        desired,
        records.map((record) => record.id),
        "rollback_transaction",
        summary,
        options,
      );
    }
    if (result.problems.length === 0) {
      inTransaction(this.#db, () => {
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
    const full = this.#resolve("transaction", id);
    const row = this.#one(
      "SELECT id, status, started_at, finished_at FROM snapshot_transactions WHERE id = ?",
      full,
    )!;
    return this.#toTransaction(row);
  }

  /** Every transaction, oldest first. */
  transactions(): Transaction[] {
    return this.#all(
      "SELECT id, status, started_at, finished_at FROM snapshot_transactions ORDER BY started_at, id",
    ).map((row) => this.#toTransaction(row));
  }

  /**
   * Every content hash a retained snapshot references, so a workspace-wide CAS sweep
   * keeps it.
   */
  referencedHashes(): Set<string> {
    const rows = this.#all(
      "SELECT DISTINCT hash FROM snapshot_files WHERE state = 'present' AND hash != ''",
    );
    return new Set(rows.map((row) => columns(row).text("hash")));
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
    const keep = new Set([...owner.hashes(), ...this.referencedHashes()]);
    return await this.#cas.sweep(keep, { keepNewerThan });
  }

  /**
   * Prunes by retention now (it also runs after every new snapshot).
   *
   * @returns How many snapshots were pruned.
   */
  prune(): number {
    return inTransaction(this.#db, () => {
      const head = this.#readHead();
      if (!head) throw new DatabaseError("The snapshot chain's head record is missing");
      const pruned = this.#prune(head);
      if (pruned > 0) this.#writeHead(head);
      return pruned;
    });
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
    const store = this.#requireStore();
    const newest = store.sequence();
    const sequence = "sequence" in point ? point.sequence : store.sequenceAt(point.timestamp);
    if (!Number.isSafeInteger(sequence) || sequence < 0 || sequence > newest) {
      throw new RangeError(`Sequence ${sequence} is not in the store (its newest is ${newest})`);
    }
    const resolved = paths.map((path) =>
      resolveActionPath(path, { root: this.root, dataDir: this.#dataDir })
    );
    return planRestore({
      sequence,
      then: store.list({ atSequence: sequence }),
      now: store.list(),
      paths: resolved,
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
    if (plan.changes.length === 0) return { plan, snapshot: null, applied: [], problems: [] };
    for (const change of plan.changes) {
      if (change.after && !(await this.#cas.has(change.after.hash))) {
        throw new SnapshotContentError(
          `sequence ${plan.sequence}`,
          change.path,
          change.after.hash,
          "missing",
        );
      }
    }
    const targets: CaptureTarget[] = plan.changes.map((c) => ({
      path: c.path,
      absentKind: "file",
    }));
    const snapshot = this.#offTheRecord || options.offTheRecord ? null : await this.#take(
      "restore",
      `restore: to sequence ${plan.sequence} (${plan.changes.length} paths)`,
      targets,
      null,
    );
    const { applied, problems } = await applySteps(plan.changes.map(restoreStep), {
      root: this.root,
      writer: this.#writer,
      origin: this.#origin ?? ORIGINS.restore,
    });
    return { plan, snapshot, applied: applied.map((step) => step.path), problems };
  }

  // --- internals -------------------------------------------------------------------------

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
    return this.#append({ actionType, summary, transactionId, files });
  }

  /** Records a snapshot as the chain's next link, then prunes; one write transaction. */
  #append(fields: Pick<SnapshotRecord, "actionType" | "summary" | "transactionId" | "files">) {
    return inTransaction(this.#db, () => {
      const head = this.#readHead();
      if (!head) throw new DatabaseError("The snapshot chain's head record is missing");
      if (fields.transactionId !== null) {
        this.#requireActive(fields.transactionId, "add a snapshot to");
      }
      const unsealed = {
        id: crypto.randomUUID(),
        number: head.headNumber + 1,
        timestamp: this.#clock(),
        actionType: fields.actionType,
        summary: fields.summary,
        transactionId: fields.transactionId,
        files: fields.files,
        previousHash: head.headHash,
      };
      const record: SnapshotRecord = { ...unsealed, hash: snapshotHash(unsealed) };
      this.#run(
        `INSERT INTO snapshots (${SNAPSHOT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        record.number,
        record.id,
        record.timestamp,
        record.actionType,
        record.summary,
        record.transactionId,
        record.previousHash,
        record.hash,
      );
      const insertFile = this.#statement(
        "INSERT INTO snapshot_files (snapshot_number, path, state, kind, hash, size, mode) VALUES (?, ?, ?, ?, ?, ?, ?)",
      );
      for (const file of record.files) {
        insertFile.run(
          record.number,
          file.path,
          file.state,
          file.kind,
          file.hash,
          file.size,
          file.mode,
        );
      }
      head.headNumber = record.number;
      head.headHash = record.hash;
      this.#prune(head);
      this.#writeHead(head);
      return record;
    });
  }

  /** Deletes the snapshots due for pruning and moves the anchor in `head` (not yet written). */
  #prune(head: ChainHead): number {
    const now = this.#clock();
    const cutoff = ageCutoff(now, this.config);
    const candidates = this.#all(
      "SELECT number, timestamp, transaction_id FROM snapshots WHERE number <= ? OR timestamp < ? ORDER BY number",
      head.headNumber - this.config.maxSnapshots,
      cutoff,
    ).map((row): PruneCandidate => ({
      number: columns(row).integer("number"),
      timestamp: columns(row).integer("timestamp"),
      transactionId: columns(row).textOrNull("transaction_id"),
    }));
    if (candidates.length === 0) return 0;
    const active = new Set(
      this.#all("SELECT id FROM snapshot_transactions WHERE status = 'active'").map((row) =>
        columns(row).text("id")
      ),
    );
    const last = planPrune({
      oldest: candidates,
      anchorNumber: head.anchorNumber,
      headNumber: head.headNumber,
      now,
      config: this.config,
      activeTransactions: active,
    });
    if (last === 0) return 0;
    const lastRow = this.#one("SELECT hash FROM snapshots WHERE number = ?", last)!;
    this.#run("DELETE FROM snapshot_files WHERE snapshot_number <= ?", last);
    const deleted = this.#run("DELETE FROM snapshots WHERE number <= ?", last);
    this.#run(
      `DELETE FROM snapshot_transactions WHERE status != 'active'
       AND id NOT IN (SELECT transaction_id FROM snapshots WHERE transaction_id IS NOT NULL)`,
    );
    head.anchorNumber = last + 1;
    head.anchorHash = columns(lastRow).text("hash");
    return Number(deleted.changes);
  }

  async #undo(
    desired: readonly CapturedFile[],
    sourceIds: readonly string[],
    actionType: string,
    summary: string,
    options: UndoOptions,
  ): Promise<RollbackResult> {
    for (const file of desired) {
      if (needsContent(file) && !(await this.#cas.has(file.hash))) {
        throw new SnapshotContentError(sourceIds.join(", "), file.path, file.hash, "missing");
      }
    }
    const roots = this.#rootTargets(desired);
    let snapshot: SnapshotRecord | null = null;
    let current: CapturedFile[];
    if (this.#offTheRecord || options.offTheRecord) {
      current = await this.#capture(desired);
    } else {
      snapshot = await this.#take(actionType, summary, roots, null);
      current = snapshot.files;
    }
    const steps: ApplyStep[] = planRollback(desired, current);
    const result = await applySteps(steps, {
      root: this.root,
      writer: this.#writer,
      origin: this.#origin ?? ORIGINS.rollback,
    });
    return { snapshot, ...result };
  }

  #rootTargets(files: readonly CapturedFile[]): CaptureTarget[] {
    const kinds = new Map(files.map((file) => [file.path, file.kind]));
    return rootsOf(files).map((path) => ({
      path,
      absentKind: kinds.get(path) === "dir" ? "dir" : "file",
    }));
  }

  /** The current state of the roots of `files`, hashed but not stored. */
  async #capture(files: readonly CapturedFile[]): Promise<CapturedFile[]> {
    return await captureTargets(this.#rootTargets(files), {
      root: this.root,
      dataDir: this.#dataDir,
      sink: HASH_ONLY_SINK,
    });
  }

  async #checkContent(hash: string): Promise<string | undefined> {
    try {
      for await (const _piece of this.#cas.readStream(hash)) { /* verified as read */ }
      return undefined;
    } catch (error) {
      if (error instanceof ContentNotFoundError) return "missing";
      if (error instanceof CorruptContentError) return error.message;
      return errorMessage(error);
    }
  }

  /**
   * Refuses a transaction that is not active.
   *
   * @param id The transaction's full ID.
   * @param wanted What was asked of it, for the message.
   * @throws {TransactionStateError} When it is not active (or no longer exists).
   */
  #requireActive(id: string, wanted: string): void {
    const row = this.#one("SELECT status FROM snapshot_transactions WHERE id = ?", id);
    const status = row ? columns(row).text("status") : "unknown";
    if (status !== "active") throw new TransactionStateError(id, status, wanted);
  }

  #finish(id: string, status: TransactionStatus, wanted: string): void {
    this.#requireActive(id, wanted);
    this.#run(
      "UPDATE snapshot_transactions SET status = ?, finished_at = ? WHERE id = ?",
      status,
      this.#clock(),
      id,
    );
  }

  #resolve(kind: IdKind, id: string): string {
    const table = kind === "snapshot" ? "snapshots" : "snapshot_transactions";
    const prefix = typeof id === "string" ? id.trim().toLowerCase() : "";
    if (!ID_PREFIX.test(prefix)) {
      throw new RangeError(
        `Invalid ${kind} ID "${id}": give the ID or a unique prefix of at least 4 hex characters`,
      );
    }
    if (this.#one(`SELECT id FROM ${table} WHERE id = ?`, prefix)) return prefix;
    const matches = this.#all(
      `SELECT id FROM ${table} WHERE id LIKE ? ORDER BY id LIMIT 6`,
      `${prefix}%`,
    ).map((row) => columns(row).text("id"));
    if (matches.length === 0) throw new UnknownIdError(kind, id);
    if (matches.length > 1) throw new AmbiguousIdError(kind, id, matches);
    return matches[0]!;
  }

  #readHead(): StoredHead | undefined {
    const row = this.#one(
      "SELECT head_number, head_hash, anchor_number, anchor_hash, seal FROM snapshot_chain WHERE singleton = 1",
    );
    if (!row) return undefined;
    return {
      headNumber: columns(row).integer("head_number"),
      headHash: columns(row).text("head_hash"),
      anchorNumber: columns(row).integer("anchor_number"),
      anchorHash: columns(row).text("anchor_hash"),
      seal: columns(row).text("seal"),
    };
  }

  #writeHead(head: ChainHead): void {
    this.#run(
      "UPDATE snapshot_chain SET head_number = ?, head_hash = ?, anchor_number = ?, anchor_hash = ?, seal = ? WHERE singleton = 1",
      head.headNumber,
      head.headHash,
      head.anchorNumber,
      head.anchorHash,
      headSeal(head),
    );
  }

  #toRecord(row: Row): SnapshotRecord {
    const files = this.#all(
      "SELECT path, state, kind, hash, size, mode FROM snapshot_files WHERE snapshot_number = ? ORDER BY path",
      columns(row).integer("number"),
    ).map((file): CapturedFile => ({
      path: columns(file).text("path"),
      state: columns(file).choice("state", FILE_STATES),
      kind: columns(file).choice("kind", FILE_KINDS),
      hash: columns(file).text("hash"),
      size: columns(file).integer("size"),
      mode: columns(file).integer("mode"),
    }));
    return {
      id: columns(row).text("id"),
      number: columns(row).integer("number"),
      timestamp: columns(row).integer("timestamp"),
      actionType: columns(row).text("action_type"),
      summary: columns(row).text("summary"),
      transactionId: columns(row).textOrNull("transaction_id"),
      files,
      previousHash: columns(row).text("previous_hash"),
      hash: columns(row).text("hash"),
    };
  }

  #toTransaction(row: Row): Transaction {
    const snapshots = this.#all(
      "SELECT id FROM snapshots WHERE transaction_id = ? ORDER BY number",
      columns(row).text("id"),
    ).map((r) => columns(r).text("id"));
    return {
      id: columns(row).text("id"),
      status: columns(row).choice("status", TRANSACTION_STATUSES),
      startedAt: columns(row).integer("started_at"),
      finishedAt: columns(row).integerOrNull("finished_at"),
      snapshots,
    };
  }

  #requireStore(): Store {
    if (!this.#store) throw new TypeError("Point-in-time restore needs the iteration store");
    return this.#store;
  }

  #one(sql: string, ...args: SQLInputValue[]): Row | undefined {
    return this.#statement(sql).get(...args);
  }

  #all(sql: string, ...args: SQLInputValue[]): Row[] {
    return this.#statement(sql).all(...args);
  }

  #run(sql: string, ...args: SQLInputValue[]) {
    return this.#statement(sql).run(...args);
  }
}

/** Sends paths `ignores` matches to `unrecorded`, the others to `writer`. */
function routedWriter(
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

function realPathOr(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return path;
  }
}

/** The step that carries out one change of a point-in-time restore. */
function restoreStep(change: RestoreChange): ApplyStep {
  if (!change.after) return { op: "remove", path: change.path, kind: "file" };
  const { hash, size, mode } = change.after;
  const kind = (mode & S_IFMT) === S_IFLNK ? "symlink" : "file";
  return { op: "write", path: change.path, kind, hash, size, mode };
}

function needsContent(file: CapturedFile): boolean {
  return file.state === "present" && file.kind !== "dir";
}
