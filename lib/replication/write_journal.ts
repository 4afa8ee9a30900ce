import type { DatabaseSync, StatementSync } from "node:sqlite";
import { columns, inTransaction, type Row, statementCache } from "../db/mod.ts";
import type { PendingRemovals } from "./removal_hold.ts";

/** What a journaled local change does. */
export type JournalOperation = "write" | "delete" | "rename" | "chmod";

/**
 * Where an entry stands: waiting to be sent, sent without an answer yet, applied by the
 * master, rejected by it, or refused here (too large to send).
 */
export type JournalState = "pending" | "sent" | "accepted" | "rejected" | "refused";

/** A local change to journal. */
export interface NewJournalEntry {
  /** The replica store's sequence of the captured iteration (the larger one for a rename). */
  sourceSeq: number;
  /** The changed path (a rename's source). */
  path: string;
  /** What happened. */
  operation: JournalOperation;
  /** A rename's destination, else `null`. */
  newPath: string | null;
  /** The content hash after the change, `null` for a deletion. */
  hash: string | null;
  /** The content size after the change. */
  size: number;
  /** Full `st_mode` after the change, 0 for a deletion. */
  mode: number;
  /** Whether the change is a deletion. */
  deleted: boolean;
  /** The master sequence of the path's latest master version applied here (`master_rowid_seen`). */
  masterSeen: number;
}

/** A journaled local change. */
export interface JournalEntry extends NewJournalEntry {
  /** The journal's number for it (`local_seq` on the wire). */
  localSeq: number;
  /** Where it stands. */
  state: JournalState;
  /** Why it was rejected or refused. */
  reason: string | null;
  /**
   * The master sequence it became, when accepted; for a change refused here, that of the
   * later change of its path the master accepted, which superseded it (see
   * {@linkcode WriteJournal.supersedeRefusals}).
   */
  masterSeq: number | null;
  /** Epoch ms when journaled. */
  createdMs: number;
}

const OPEN = "state IN ('pending', 'sent')";
const COLUMNS =
  "local_seq, source_seq, path, operation, new_path, hash, size, mode, deleted, master_seen, state, reason, master_seq, created_ms";

/**
 * The durable write journal of a replica (table `replica_journal`): every local write,
 * deletion, rename and chmod is stored here before it is sent anywhere, and keeps its
 * state until the master answers. Entries are sent oldest first; an entry answered once
 * is never sent again. Tables must be migrated first (`openReplicaTables`).
 */
export class WriteJournal {
  readonly #db: DatabaseSync;
  readonly #statement: (sql: string) => StatementSync;
  /** Open (pending or sent) entries per path, rename destinations included. */
  readonly #openByPath = new Map<string, number>();
  readonly #listeners = new Set<() => void>();

  /**
   * Opens the journal on the replica's database.
   *
   * @param db The replica's database, already migrated.
   */
  constructor(db: DatabaseSync) {
    this.#db = db;
    this.#statement = statementCache(db);
    const rows = this.#statement(`SELECT path, new_path FROM replica_journal WHERE ${OPEN}`)
      .all();
    for (const row of rows) {
      const read = columns(row);
      this.#count(read.text("path"), read.textOrNull("new_path"), 1);
    }
  }

  /**
   * Journals local changes in one transaction, in order.
   *
   * @returns The entries with their local sequence numbers.
   */
  append(entries: NewJournalEntry[]): JournalEntry[] {
    if (entries.length === 0) return [];
    const now = Date.now();
    const insert = this.#statement(
      `INSERT INTO replica_journal
         (source_seq, path, operation, new_path, hash, size, mode, deleted, master_seen, created_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const out = inTransaction(this.#db, () =>
      entries.map((entry): JournalEntry => {
        const result = insert.run(
          entry.sourceSeq,
          entry.path,
          entry.operation,
          entry.newPath,
          entry.hash,
          entry.size,
          entry.mode,
          entry.deleted ? 1 : 0,
          entry.masterSeen,
          now,
        );
        return {
          ...entry,
          localSeq: Number(result.lastInsertRowid),
          state: "pending",
          reason: null,
          masterSeq: null,
          createdMs: now,
        };
      }));
    for (const entry of out) this.#count(entry.path, entry.newPath, 1);
    for (const listener of this.#listeners) listener();
    return out;
  }

  /** Calls `listener` after every append; returns an unsubscribe. */
  onAppend(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * The removals not yet sent: how many, and when the oldest and newest were journaled;
   * `null` when none waits.
   */
  pendingRemovals(): PendingRemovals | null {
    const row = this.#statement(
      `SELECT MIN(created_ms) AS oldest, MAX(created_ms) AS newest, COUNT(*) AS count
       FROM replica_journal WHERE state = 'pending' AND deleted = 1`,
    ).get();
    const [oldest, newest, count] = [row?.oldest, row?.newest, row?.count];
    return typeof oldest === "number" && typeof newest === "number"
      ? { oldestMs: oldest, newestMs: newest, count: Number(count) }
      : null;
  }

  /** The oldest open (pending or sent) entries after `local_seq` `after`, at most `limit`. */
  open(limit = 256, after = 0): JournalEntry[] {
    return this.#all(
      `SELECT ${COLUMNS} FROM replica_journal WHERE ${OPEN} AND local_seq > ? ORDER BY local_seq LIMIT ?`,
      after,
      limit,
    );
  }

  /** Marks entries as sent. */
  markSent(localSeqs: number[]): void {
    const update = this.#statement(
      "UPDATE replica_journal SET state = 'sent' WHERE local_seq = ? AND state = 'pending'",
    );
    inTransaction(this.#db, () => {
      for (const seq of localSeqs) update.run(seq);
    });
  }

  /**
   * Records the master's answer. Entries not open (already answered) are ignored, so an
   * answer that arrives twice changes nothing.
   *
   * @param accepted `[localSeq, masterSeq]` pairs.
   * @param rejected `[localSeq, reason]` pairs.
   * @returns The entries this answer resolved, with their new state.
   */
  resolve(accepted: [number, number][], rejected: [number, string][]): JournalEntry[] {
    const now = Date.now();
    const select = this.#statement(
      `SELECT ${COLUMNS} FROM replica_journal WHERE local_seq = ? AND ${OPEN}`,
    );
    const update = this.#statement(
      "UPDATE replica_journal SET state = ?, reason = ?, master_seq = ?, resolved_ms = ? WHERE local_seq = ?",
    );
    const resolved = inTransaction(this.#db, () => {
      const out: JournalEntry[] = [];
      const apply = (
        seq: number,
        state: JournalState,
        reason: string | null,
        master: number | null,
      ) => {
        const row = select.get(seq);
        if (!row) return;
        update.run(state, reason, master, now, seq);
        out.push({ ...toEntry(row), state, reason, masterSeq: master });
      };
      for (const [seq, master] of accepted) apply(seq, "accepted", null, master);
      for (const [seq, reason] of rejected) apply(seq, "rejected", reason, null);
      return out;
    });
    for (const entry of resolved) this.#count(entry.path, entry.newPath, -1);
    return resolved.sort((a, b) => a.localSeq - b.localSeq);
  }

  /** Refuses an open entry here, without sending it (e.g. too large). */
  refuse(localSeq: number, reason: string): JournalEntry | undefined {
    const row = this.#statement(
      `SELECT ${COLUMNS} FROM replica_journal WHERE local_seq = ? AND ${OPEN}`,
    ).get(localSeq);
    if (!row) return undefined;
    this.#statement(
      "UPDATE replica_journal SET state = 'refused', reason = ?, resolved_ms = ? WHERE local_seq = ?",
    ).run(reason, Date.now(), localSeq);
    const entry = toEntry(row);
    this.#count(entry.path, entry.newPath, -1);
    return { ...entry, state: "refused", reason };
  }

  /** Whether `path` has entries the master has not answered yet. */
  hasOpen(path: string): boolean {
    return (this.#openByPath.get(path) ?? 0) > 0;
  }

  /** Whether an entry for the local iteration `sourceSeq` of `path` awaits the master's answer. */
  hasOpenSource(path: string, sourceSeq: number): boolean {
    return this.#statement(
      `SELECT 1 FROM replica_journal WHERE path = ? AND source_seq = ? AND ${OPEN} LIMIT 1`,
    ).get(path, sourceSeq) !== undefined;
  }

  /** How many entries the master has not answered yet. */
  openCount(): number {
    const row = this.#statement(`SELECT COUNT(*) AS n FROM replica_journal WHERE ${OPEN}`).get()!;
    return columns(row).integer("n");
  }

  /** The highest replica store sequence journaled so far, 0 when none. */
  sourceHighWater(): number {
    return columns(
      this.#statement("SELECT COALESCE(MAX(source_seq), 0) AS s FROM replica_journal").get()!,
    ).integer("s");
  }

  /** Entries in one state, newest first, at most `limit`. */
  list(state: JournalState, limit = 1000): JournalEntry[] {
    return this.#all(
      `SELECT ${COLUMNS} FROM replica_journal WHERE state = ? ORDER BY local_seq DESC LIMIT ?`,
      state,
      limit,
    );
  }

  /**
   * Settles the changes of `path` refused here (too large) before `localSeq`, a later
   * change of it the master accepted at `masterSeq`: the refusal is no longer what the path
   * holds (as `ConflictLog.supersede` settles the master's refusals). Each keeps that
   * sequence as its `masterSeq`.
   *
   * @returns How many were settled.
   */
  supersedeRefusals(path: string, localSeq: number, masterSeq: number): number {
    const result = this.#statement(
      `UPDATE replica_journal SET master_seq = ? WHERE state = 'refused' AND local_seq < ?
       AND master_seq IS NULL AND (path = ? OR new_path = ?)`,
    ).run(masterSeq, localSeq, path, path);
    return Number(result.changes);
  }

  /**
   * The changes refused here (too large), newest first, each with whether a later change
   * of its path superseded it (see {@linkcode WriteJournal.supersedeRefusals}).
   *
   * @param limit The most to list.
   * @param openOnly Only those not superseded.
   */
  refusals(limit = 1000, openOnly = false): (JournalEntry & { superseded: boolean })[] {
    return this.#all(
      `SELECT ${COLUMNS} FROM replica_journal WHERE state = 'refused'
       ${openOnly ? "AND master_seq IS NULL" : ""} ORDER BY local_seq DESC LIMIT ?`,
      limit,
    ).map((entry) => ({ ...entry, superseded: entry.masterSeq !== null }));
  }

  /** How many changes refused here no later change of their path superseded. */
  openRefusalCount(): number {
    const row = this.#statement(
      "SELECT COUNT(*) AS n FROM replica_journal WHERE state = 'refused' AND master_seq IS NULL",
    ).get()!;
    return columns(row).integer("n");
  }

  /** How many entries are in each state. */
  counts(): Record<JournalState, number> {
    const out: Record<JournalState, number> = {
      pending: 0,
      sent: 0,
      accepted: 0,
      rejected: 0,
      refused: 0,
    };
    const rows = this.#statement(
      "SELECT state, COUNT(*) AS n FROM replica_journal GROUP BY state",
    ).all();
    for (const row of rows) {
      const read = columns(row);
      out[read.choice("state", JOURNAL_STATES)] = read.integer("n");
    }
    return out;
  }

  #count(path: string, newPath: string | null, delta: number): void {
    for (const p of newPath === null ? [path] : [path, newPath]) {
      const n = (this.#openByPath.get(p) ?? 0) + delta;
      if (n <= 0) this.#openByPath.delete(p);
      else this.#openByPath.set(p, n);
    }
  }

  #all(sql: string, ...args: (string | number)[]): JournalEntry[] {
    return this.#statement(sql).all(...args).map(toEntry);
  }
}

const JOURNAL_STATES: readonly JournalState[] = [
  "pending",
  "sent",
  "accepted",
  "rejected",
  "refused",
];
const OPERATIONS: readonly JournalOperation[] = ["write", "delete", "rename", "chmod"];

function toEntry(row: Row): JournalEntry {
  const read = columns(row);
  return {
    localSeq: read.integer("local_seq"),
    sourceSeq: read.integer("source_seq"),
    path: read.text("path"),
    operation: read.choice("operation", OPERATIONS),
    newPath: read.textOrNull("new_path"),
    hash: read.textOrNull("hash"),
    size: read.integer("size"),
    mode: read.integer("mode"),
    deleted: read.boolean("deleted"),
    masterSeen: read.integer("master_seen"),
    state: read.choice("state", JOURNAL_STATES),
    reason: read.textOrNull("reason"),
    masterSeq: read.integerOrNull("master_seq"),
    createdMs: read.integer("created_ms"),
  };
}
