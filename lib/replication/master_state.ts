import type { DatabaseSync, StatementSync } from "node:sqlite";
import { columns, inTransaction, migrate, statementCache } from "../db/mod.ts";
import { MASTER_MIGRATIONS } from "./_schema.ts";

/** How long the outcome of a write-back entry is kept for answering a resend: 30 days. */
export const OUTCOME_RETENTION_MS = 30 * 24 * 3600 * 1000;

/** What the master remembers of one replica. */
export interface ReplicaRecord {
  /** The replica's identity. */
  sandboxId: string;
  /** The highest sequence it acknowledged (cumulative). */
  ackedSequence: number;
  /** Epoch ms of its first connection. */
  firstSeenMs: number;
  /** Epoch ms of its last message. */
  lastSeenMs: number;
  /** Where it last connected from. */
  remote: string;
}

/** The stored answer to one write-back entry. */
export interface WriteBackOutcome {
  /** Whether the entry was applied. */
  accepted: boolean;
  /** The master sequence it became (accepted), else 0. */
  masterSeq: number;
  /** The wire reason (rejected), else `""`. */
  reason: string;
}

/** What an accepted write-back entry writes (or deletes) at one path. */
export interface AppliedContent {
  /** Normalized workspace-relative path. */
  path: string;
  /** Content hash, `""` for a deletion. */
  hash: string;
  /** Full `st_mode`, 0 for a deletion. */
  mode: number;
  /** True when the entry deletes the path. */
  deleted: boolean;
}

/**
 * The master's durable replication records in its own database: acknowledged sequences
 * per sandbox id, the outcome of every write-back entry so that an entry sent again
 * (its answer was lost with a connection) is answered again, never applied twice, and
 * the entries being applied (see {@linkcode MasterState.noteApplying}).
 */
export class MasterState {
  readonly #db: DatabaseSync;
  readonly #statement: (sql: string) => StatementSync;
  #saves = 0;

  /**
   * Opens the records on the master's database, migrating its tables.
   *
   * @param db The master's database (the store's connection); its tables are migrated.
   * @throws {DatabaseError} When the database holds a newer schema.
   */
  constructor(db: DatabaseSync) {
    this.#db = db;
    this.#statement = statementCache(db);
    migrate(db, "master", MASTER_MIGRATIONS);
  }

  /** Notes that `sandboxId` connected or spoke from `remote`. */
  touch(sandboxId: string, remote: string): void {
    const now = Date.now();
    this.#statement(
      `INSERT INTO master_replicas (sandbox_id, first_seen_ms, last_seen_ms, remote) VALUES (?, ?, ?, ?)
       ON CONFLICT (sandbox_id) DO UPDATE SET last_seen_ms = excluded.last_seen_ms, remote = excluded.remote`,
    ).run(sandboxId, now, now, remote);
  }

  /** Records a cumulative acknowledgement; a lower one than stored changes nothing. */
  recordAck(sandboxId: string, sequence: number): void {
    this.#statement(
      `UPDATE master_replicas SET acked_sequence = MAX(acked_sequence, ?), last_seen_ms = ?
       WHERE sandbox_id = ?`,
    ).run(sequence, Date.now(), sandboxId);
  }

  /** Every replica ever seen, by id. */
  replicas(): ReplicaRecord[] {
    return (this.#statement(
      `SELECT sandbox_id AS sandboxId, acked_sequence AS ackedSequence, first_seen_ms AS firstSeenMs,
              last_seen_ms AS lastSeenMs, remote FROM master_replicas ORDER BY sandbox_id`,
    ).all()).map((row) => {
      const read = columns(row);
      return {
        sandboxId: read.text("sandboxId"),
        ackedSequence: read.integer("ackedSequence"),
        firstSeenMs: read.integer("firstSeenMs"),
        lastSeenMs: read.integer("lastSeenMs"),
        remote: read.text("remote"),
      };
    });
  }

  /** The stored outcome of an entry, if it was decided before. */
  outcome(sandboxId: string, localSeq: bigint): WriteBackOutcome | undefined {
    const row = this.#statement(
      `SELECT accepted, master_seq AS masterSeq, reason FROM master_writebacks
       WHERE sandbox_id = ? AND local_seq = ?`,
    ).get(sandboxId, localSeq);
    if (!row) return undefined;
    const read = columns(row);
    return {
      accepted: read.boolean("accepted"),
      masterSeq: read.integer("masterSeq"),
      reason: read.text("reason"),
    };
  }

  /**
   * Stores the outcome of an entry. Outcomes older than {@linkcode OUTCOME_RETENTION_MS}
   * are forgotten now and then: a replica resends an entry only until its answer arrives.
   */
  saveOutcome(sandboxId: string, localSeq: bigint, outcome: WriteBackOutcome): void {
    inTransaction(this.#db, () => this.#saveOutcome(sandboxId, localSeq, outcome));
  }

  #saveOutcome(sandboxId: string, localSeq: bigint, outcome: WriteBackOutcome): void {
    this.#statement("DELETE FROM master_applying WHERE sandbox_id = ? AND local_seq = ?")
      .run(sandboxId, localSeq);
    if (++this.#saves % 1000 === 0) {
      this.#statement("DELETE FROM master_writebacks WHERE decided_ms < ?").run(
        Date.now() - OUTCOME_RETENTION_MS,
      );
    }
    this.#statement(
      `INSERT OR REPLACE INTO master_writebacks
         (sandbox_id, local_seq, accepted, master_seq, reason, decided_ms) VALUES (?, ?, ?, ?, ?, ?)`,
    ).run(
      sandboxId,
      localSeq,
      outcome.accepted ? 1 : 0,
      outcome.masterSeq,
      outcome.reason,
      Date.now(),
    );
  }

  /**
   * Notes what accepted entries about to be written to the workspace may leave on disk,
   * until their outcome is stored: one state per path for a write or a deletion, more for
   * a rename (its source gone, its target before and after a mode change). A master killed
   * in between finds those states on disk, unrecorded, and records them as the agent's on
   * restart; the entry, sent again, would then conflict with its own result.
   * {@linkcode MasterState.applying} tells that result apart.
   */
  noteApplying(sandboxId: string, states: Array<{ localSeq: bigint } & AppliedContent>): void {
    if (states.length === 0) return;
    const insert = this.#statement(
      `INSERT OR IGNORE INTO master_applying (sandbox_id, local_seq, path, hash, mode, deleted)
       VALUES (?, ?, ?, ?, ?, ?)`,
    );
    inTransaction(this.#db, () => {
      for (const { localSeq, path, hash, mode, deleted } of states) {
        insert.run(sandboxId, localSeq, path, hash, mode, deleted ? 1 : 0);
      }
    });
  }

  /**
   * Forgets what an entry noted it may leave on disk (see {@linkcode MasterState.noteApplying}):
   * it was not made, and is decided again. Else the decision would take a change someone
   * else made since (the rename's source removed) for the entry's own result.
   *
   * @param sandboxId The sending replica.
   * @param localSeq The entry's local sequence.
   */
  forgetApplying(sandboxId: string, localSeq: bigint): void {
    this.#statement("DELETE FROM master_applying WHERE sandbox_id = ? AND local_seq = ?")
      .run(sandboxId, localSeq);
  }

  /** The states noted for an entry by {@linkcode MasterState.noteApplying}, while it is undecided. */
  applying(sandboxId: string, localSeq: bigint): AppliedContent[] {
    const rows = this.#statement(
      `SELECT path, hash, mode, deleted FROM master_applying WHERE sandbox_id = ? AND local_seq = ?
       ORDER BY path, deleted, mode, hash`,
    ).all(sandboxId, localSeq);
    return rows.map((row) => {
      const read = columns(row);
      return {
        path: read.text("path"),
        hash: read.text("hash"),
        mode: read.integer("mode"),
        deleted: read.boolean("deleted"),
      };
    });
  }
}
