import type { DatabaseSync, StatementSync } from "node:sqlite";
import { columns, type Row, statementCache } from "../db/mod.ts";
import { KEPT_REJECTION_COLUMNS, type KeptRejection, readKeptRejection } from "./kept_rejection.ts";
import type { JournalEntry } from "./write_journal.ts";
import { reasonWord } from "./write_back_decision.ts";

/**
 * A local change the master rejected; its content stays in the replica's store (read it
 * with `chronicle cat` or from the CAS under `keptHash`).
 */
export interface Conflict extends KeptRejection {
  /** Epoch ms of the resolution, `null` while unresolved. */
  resolvedMs: number | null;
  /** How it was resolved (`upstream` when a sandbox took the master's version), else `null`. */
  resolution: string | null;
}

const COLUMNS = `${KEPT_REJECTION_COLUMNS}, resolved_ms AS resolvedMs, resolution`;

/** In SQL, whether a row's reason is a conflict: its reason word (`reasonWord`) is `conflict`. */
const IS_CONFLICT = "(reason = 'conflict' OR reason LIKE 'conflict:%')";

/**
 * The replica's record of rejected write-backs (table `replica_conflicts`). Nothing is
 * lost: the rejected content stays in the store under `keptHash`. Tables must be
 * migrated first (`openReplicaTables`).
 */
export class ConflictLog {
  readonly #statement: (sql: string) => StatementSync;

  /**
   * Opens the log on the replica's database.
   *
   * @param db The replica's database, already migrated.
   */
  constructor(db: DatabaseSync) {
    this.#statement = statementCache(db);
  }

  /**
   * Records a rejected entry. A conflict left for a person stays one row per path: a
   * further rejection of the same path while it is open (the person saving again before
   * resolving) updates that row with the newer kept content instead of adding another.
   *
   * @param entry The journal entry.
   * @param reason The master's reason.
   * @param resolution Set when the conflict is settled at once (a sandbox takes the
   * master's version: `"upstream"`), else left for a person.
   */
  add(entry: JournalEntry, reason: string, resolution: string | null): Conflict {
    const open = resolution === null
      ? this.#openFor(entry.path, reasonWord(reason) === "conflict")
      : undefined;
    if (open) return this.#update(open, entry, reason);
    const now = Date.now();
    const result = this.#statement(
      `INSERT INTO replica_conflicts
         (local_seq, path, operation, reason, kept_hash, kept_size, kept_mode, created_ms, resolved_ms, resolution)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      entry.localSeq,
      entry.path,
      entry.operation,
      reason,
      entry.hash,
      entry.size,
      entry.mode,
      now,
      resolution === null ? null : now,
      resolution,
    );
    return {
      id: Number(result.lastInsertRowid),
      localSeq: entry.localSeq,
      path: entry.path,
      operation: entry.operation,
      reason,
      keptHash: entry.hash,
      keptSize: entry.size,
      keptMode: entry.mode,
      createdMs: now,
      resolvedMs: resolution === null ? null : now,
      resolution,
    };
  }

  /** Conflicts, newest first; only unresolved ones when asked. */
  list(options: { unresolved?: boolean; limit?: number } = {}): Conflict[] {
    const where = options.unresolved ? "WHERE resolved_ms IS NULL" : "";
    return (this.#statement(
      `SELECT ${COLUMNS} FROM replica_conflicts ${where} ORDER BY id DESC LIMIT ?`,
    ).all(options.limit ?? 1000)).map(toConflict);
  }

  /** Marks a conflict resolved, e.g. by `sync resolve`. */
  resolve(id: number, resolution: string): void {
    this.#statement(
      "UPDATE replica_conflicts SET resolved_ms = ?, resolution = ? WHERE id = ?",
    ).run(Date.now(), resolution, id);
  }

  /**
   * Settles, as `superseded`, the refusals of `path` still open that a later change of it
   * the master accepted leaves behind: those of changes before `localSeq` that were no
   * conflicts (too large, forbidden, filtered, failed). A conflict stays for its person:
   * the master's version was not weighed against hers.
   *
   * @returns How many were settled.
   */
  supersede(path: string, localSeq: number): number {
    const result = this.#statement(
      `UPDATE replica_conflicts SET resolved_ms = ?, resolution = 'superseded'
       WHERE path = ? AND resolved_ms IS NULL AND local_seq < ? AND NOT ${IS_CONFLICT}`,
    ).run(Date.now(), path, localSeq);
    return Number(result.changes);
  }

  /** Notes progress on an open conflict (e.g. `merging`) without closing it. */
  note(id: number, resolution: string): void {
    this.#statement(
      "UPDATE replica_conflicts SET resolution = ? WHERE id = ? AND resolved_ms IS NULL",
    )
      .run(resolution, id);
  }

  /**
   * The open row a further rejection of `path` updates: one of the same kind only, so a
   * conflict awaiting its person keeps its reason when a later save of hers is refused as
   * too large (that refusal gets a row of its own, which a later accepted change settles).
   */
  #openFor(path: string, conflict: boolean): Conflict | undefined {
    const row = this.#statement(
      `SELECT ${COLUMNS} FROM replica_conflicts WHERE path = ? AND resolved_ms IS NULL
         AND ${IS_CONFLICT} = ?
       ORDER BY id DESC LIMIT 1`,
    ).get(path, conflict ? 1 : 0);
    return row ? toConflict(row) : undefined;
  }

  /** The open conflict now keeps the newer content; when it opened and its progress stay. */
  #update(open: Conflict, entry: JournalEntry, reason: string): Conflict {
    this.#statement(
      `UPDATE replica_conflicts SET local_seq = ?, operation = ?, reason = ?, kept_hash = ?,
         kept_size = ?, kept_mode = ? WHERE id = ?`,
    ).run(entry.localSeq, entry.operation, reason, entry.hash, entry.size, entry.mode, open.id);
    return {
      ...open,
      localSeq: entry.localSeq,
      operation: entry.operation,
      reason,
      keptHash: entry.hash,
      keptSize: entry.size,
      keptMode: entry.mode,
    };
  }

  /** Whether `path` (as a change's source path) has an unresolved conflict. */
  hasUnresolved(path: string): boolean {
    return this.#statement(
      "SELECT 1 FROM replica_conflicts WHERE path = ? AND resolved_ms IS NULL LIMIT 1",
    ).get(path) !== undefined;
  }

  /** How many conflicts there are, and how many are unresolved. */
  counts(): { total: number; unresolved: number } {
    const row = this.#statement(
      `SELECT COUNT(*) AS total, COALESCE(SUM(resolved_ms IS NULL), 0) AS unresolved
       FROM replica_conflicts`,
    ).get()!;
    const read = columns(row);
    return { total: read.integer("total"), unresolved: read.integer("unresolved") };
  }
}

function toConflict(row: Row): Conflict {
  const read = columns(row);
  return {
    ...readKeptRejection(read),
    resolvedMs: read.integerOrNull("resolvedMs"),
    resolution: read.textOrNull("resolution"),
  };
}
