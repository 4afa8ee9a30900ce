import type { DatabaseSync, SQLInputValue, StatementSync } from "node:sqlite";
import { columns, inTransaction, migrate, type Row, statementCache } from "../db/mod.ts";
import type { HashCollector } from "../store/mod.ts";
import { type IdKind, TransactionStateError } from "./errors.ts";
import { parseIdPrefix, pickIdMatch } from "./lookup.ts";
import type { PruneCandidate } from "./retention.ts";
import { SNAPSHOT_MIGRATIONS } from "./schema.ts";
import type {
  CapturedFile,
  FileKind,
  FileStateName,
  SnapshotRecord,
  Transaction,
  TransactionStatus,
} from "./types.ts";
import type { StoredHead } from "./verify_chain.ts";

/** The values the snapshot tables' text columns may hold, checked as rows are read. */
const FILE_STATES: readonly FileStateName[] = ["present", "absent"];
const FILE_KINDS: readonly FileKind[] = ["file", "symlink", "dir"];
const TRANSACTION_STATUSES: readonly TransactionStatus[] = ["active", "committed", "rolled_back"];

const SNAPSHOT_COLUMNS =
  "number, id, timestamp, action_type, summary, transaction_id, previous_hash, hash";
const TRANSACTION_COLUMNS = "id, status, started_at, finished_at";

/**
 * The snapshot tables (see `schema.ts`) as typed records: `snapshots` with their
 * `snapshot_files`, `snapshot_transactions`, and the `snapshot_chain` head row. Every row
 * is read through `columns()`, so a damaged database fails with the column's name. SQL
 * only: what to write is decided by the chain (`chain.ts`) and the facade (`Snapshots`).
 */
export class SnapshotRecords {
  readonly #db: DatabaseSync;
  readonly #statement: (sql: string) => StatementSync;

  private constructor(db: DatabaseSync) {
    this.#db = db;
    this.#statement = statementCache(db);
  }

  /**
   * Opens the snapshot tables of a database, creating them if needed.
   *
   * @param db The workspace's database.
   * @returns The records.
   * @throws {DatabaseError} When the database holds a newer snapshot schema.
   */
  static open(db: DatabaseSync): SnapshotRecords {
    migrate(db, "snapshots", SNAPSHOT_MIGRATIONS);
    return new SnapshotRecords(db);
  }

  /**
   * Runs `work` in one write transaction (`BEGIN IMMEDIATE`), or inside the one open.
   *
   * @param work Reads and writes of these records.
   * @returns What `work` returned.
   */
  write<T>(work: () => T): T {
    return inTransaction(this.#db, work);
  }

  /**
   * The full ID a snapshot or transaction ID (or unique prefix of it) names.
   *
   * @throws {RangeError} When the prefix is too short or not hex.
   * @throws {UnknownIdError} When none matches.
   * @throws {AmbiguousIdError} When several match.
   */
  resolveId(kind: IdKind, id: string): string {
    const table = kind === "snapshot" ? "snapshots" : "snapshot_transactions";
    const prefix = parseIdPrefix(kind, id);
    if (this.#one(`SELECT id FROM ${table} WHERE id = ?`, prefix)) return prefix;
    const matches = this.#all(
      `SELECT id FROM ${table} WHERE id LIKE ? ORDER BY id LIMIT 6`,
      `${prefix}%`,
    ).map((row) => columns(row).text("id"));
    return pickIdMatch(kind, id, matches);
  }

  /**
   * Every stored snapshot with its files, oldest first.
   *
   * @param transactionId Only this transaction's (full ID).
   */
  snapshots(transactionId?: string): SnapshotRecord[] {
    const rows = transactionId === undefined
      ? this.#all(`SELECT ${SNAPSHOT_COLUMNS} FROM snapshots ORDER BY number`)
      : this.#all(
        `SELECT ${SNAPSHOT_COLUMNS} FROM snapshots WHERE transaction_id = ? ORDER BY number`,
        transactionId,
      );
    return rows.map((row) => this.#toRecord(row));
  }

  /** One snapshot by its full ID (from {@linkcode SnapshotRecords.resolveId}). */
  snapshot(id: string): SnapshotRecord {
    return this.#toRecord(this.#one(`SELECT ${SNAPSHOT_COLUMNS} FROM snapshots WHERE id = ?`, id)!);
  }

  /** Stores a sealed snapshot and its files (the head row is written separately). */
  insertSnapshot(record: SnapshotRecord): void {
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
  }

  /** The chain's head row, or `undefined` when it is missing. */
  readHead(): StoredHead | undefined {
    const row = this.#one(
      "SELECT head_number, head_hash, anchor_number, anchor_hash, seal FROM snapshot_chain WHERE singleton = 1",
    );
    if (!row) return undefined;
    const read = columns(row);
    return {
      headNumber: read.integer("head_number"),
      headHash: read.text("head_hash"),
      anchorNumber: read.integer("anchor_number"),
      anchorHash: read.text("anchor_hash"),
      seal: read.text("seal"),
    };
  }

  /** Overwrites the chain's head row with `head`, seal included as given. */
  writeHead(head: StoredHead): void {
    this.#run(
      "UPDATE snapshot_chain SET head_number = ?, head_hash = ?, anchor_number = ?, anchor_hash = ?, seal = ? WHERE singleton = 1",
      head.headNumber,
      head.headHash,
      head.anchorNumber,
      head.anchorHash,
      head.seal,
    );
  }

  /**
   * The snapshots retention may prune: numbered at most `throughNumber` or older than
   * `olderThan` (epoch ms), ascending by number.
   */
  pruneCandidates(throughNumber: number, olderThan: number): PruneCandidate[] {
    return this.#all(
      "SELECT number, timestamp, transaction_id FROM snapshots WHERE number <= ? OR timestamp < ? ORDER BY number",
      throughNumber,
      olderThan,
    ).map((row): PruneCandidate => {
      const read = columns(row);
      return {
        number: read.integer("number"),
        timestamp: read.integer("timestamp"),
        transactionId: read.textOrNull("transaction_id"),
      };
    });
  }

  /** The IDs of the transactions still active. */
  activeTransactionIds(): Set<string> {
    return new Set(
      this.#all("SELECT id FROM snapshot_transactions WHERE status = 'active'").map((row) =>
        columns(row).text("id")
      ),
    );
  }

  /** The hash of the snapshot numbered `number` (which must exist). */
  hashOf(number: number): string {
    return columns(this.#one("SELECT hash FROM snapshots WHERE number = ?", number)!).text("hash");
  }

  /**
   * Deletes the snapshots numbered at most `number` with their files, and the finished
   * transactions left with no snapshot.
   *
   * @returns How many snapshots were deleted.
   */
  deleteThrough(number: number): number {
    this.#run("DELETE FROM snapshot_files WHERE snapshot_number <= ?", number);
    const deleted = this.#run("DELETE FROM snapshots WHERE number <= ?", number);
    this.#run(
      `DELETE FROM snapshot_transactions WHERE status != 'active'
       AND id NOT IN (SELECT transaction_id FROM snapshots WHERE transaction_id IS NOT NULL)`,
    );
    return Number(deleted.changes);
  }

  /** How many file rows belong to no snapshot (left by a snapshot deleted by hand). */
  orphanFileCount(): number {
    return columns(
      this.#one(
        "SELECT COUNT(*) AS n FROM snapshot_files WHERE snapshot_number NOT IN (SELECT number FROM snapshots)",
      )!,
    ).integer("n");
  }

  /**
   * Refuses a transaction that is not active.
   *
   * @param id The transaction's full ID.
   * @param wanted What was asked of it, for the message.
   * @throws {TransactionStateError} When it is not active (or no longer exists).
   */
  requireActive(id: string, wanted: string): void {
    const row = this.#one("SELECT status FROM snapshot_transactions WHERE id = ?", id);
    const status = row ? columns(row).text("status") : "unknown";
    if (status !== "active") throw new TransactionStateError(id, status, wanted);
  }

  /** Records a new, active transaction. */
  insertTransaction(id: string, startedAt: number): void {
    this.#run(
      "INSERT INTO snapshot_transactions (id, status, started_at, finished_at) VALUES (?, 'active', ?, NULL)",
      id,
      startedAt,
    );
  }

  /** Sets a transaction's final status and the time it finished. */
  finishTransaction(id: string, status: TransactionStatus, finishedAt: number): void {
    this.#run(
      "UPDATE snapshot_transactions SET status = ?, finished_at = ? WHERE id = ?",
      status,
      finishedAt,
      id,
    );
  }

  /** One transaction by its full ID, with its snapshots' IDs. */
  transaction(id: string): Transaction {
    return this.#toTransaction(
      this.#one(`SELECT ${TRANSACTION_COLUMNS} FROM snapshot_transactions WHERE id = ?`, id)!,
    );
  }

  /** Every transaction, oldest first. */
  transactions(): Transaction[] {
    return this.#all(
      `SELECT ${TRANSACTION_COLUMNS} FROM snapshot_transactions ORDER BY started_at, id`,
    ).map((row) => this.#toTransaction(row));
  }

  /** Every content hash a stored snapshot references. */
  referencedHashes(): Set<string> {
    return this.addReferencedHashes(new Set());
  }

  /**
   * Adds the hashes of {@linkcode referencedHashes} to `hashes`, row by row.
   *
   * @returns `hashes`.
   */
  addReferencedHashes<T extends HashCollector>(hashes: T): T {
    const rows = this.#statement(
      "SELECT DISTINCT hash FROM snapshot_files WHERE state = 'present' AND hash != ''",
    ).iterate();
    for (const row of rows) hashes.add(columns(row).text("hash"));
    return hashes;
  }

  #toRecord(row: Row): SnapshotRecord {
    const read = columns(row);
    const number = read.integer("number");
    const files = this.#all(
      "SELECT path, state, kind, hash, size, mode FROM snapshot_files WHERE snapshot_number = ? ORDER BY path",
      number,
    ).map((fileRow): CapturedFile => {
      const file = columns(fileRow);
      return {
        path: file.text("path"),
        state: file.choice("state", FILE_STATES),
        kind: file.choice("kind", FILE_KINDS),
        hash: file.text("hash"),
        size: file.integer("size"),
        mode: file.integer("mode"),
      };
    });
    return {
      id: read.text("id"),
      number,
      timestamp: read.integer("timestamp"),
      actionType: read.text("action_type"),
      summary: read.text("summary"),
      transactionId: read.textOrNull("transaction_id"),
      files,
      previousHash: read.text("previous_hash"),
      hash: read.text("hash"),
    };
  }

  #toTransaction(row: Row): Transaction {
    const read = columns(row);
    const id = read.text("id");
    const snapshots = this.#all(
      "SELECT id FROM snapshots WHERE transaction_id = ? ORDER BY number",
      id,
    ).map((r) => columns(r).text("id"));
    return {
      id,
      status: read.choice("status", TRANSACTION_STATUSES),
      startedAt: read.integer("started_at"),
      finishedAt: read.integerOrNull("finished_at"),
      snapshots,
    };
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
