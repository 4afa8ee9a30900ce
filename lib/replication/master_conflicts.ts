import type { DatabaseSync, StatementSync } from "node:sqlite";
import { columns, statementCache } from "../db/mod.ts";
import { KEPT_REJECTION_COLUMNS, type KeptRejection, readKeptRejection } from "./kept_rejection.ts";

/**
 * A write-back the master rejected, as the master keeps it: the content the replica sent
 * stays in the master's CAS under `keptHash` (`null` when none came).
 */
export interface MasterConflict extends KeptRejection {
  /** The sending replica. */
  sandboxId: string;
}

/** A new row of {@linkcode MasterConflicts.add}. */
export type NewMasterConflict = Omit<MasterConflict, "id" | "createdMs">;

const COLUMNS = `${KEPT_REJECTION_COLUMNS}, sandbox_id AS sandboxId`;

/**
 * The master's record of rejected write-backs (table `master_conflicts`, migrated by
 * `MasterState`): a rejected entry's content stays in the master's CAS under `keptHash`,
 * and the CAS sweep keeps it (see {@linkcode keptConflictHashes}).
 */
export class MasterConflicts {
  readonly #statement: (sql: string) => StatementSync;

  /**
   * Opens the record.
   *
   * @param db The master's database, already migrated.
   */
  constructor(db: DatabaseSync) {
    this.#statement = statementCache(db);
  }

  /**
   * Records a rejection.
   *
   * @param conflict What was rejected, from whom, why, and the content kept.
   * @returns The stored row.
   */
  add(conflict: NewMasterConflict): MasterConflict {
    const createdMs = Date.now();
    const result = this.#statement(
      `INSERT INTO master_conflicts
         (sandbox_id, local_seq, path, operation, reason, kept_hash, kept_size, kept_mode, created_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      conflict.sandboxId,
      conflict.localSeq,
      conflict.path,
      conflict.operation,
      conflict.reason,
      conflict.keptHash,
      conflict.keptSize,
      conflict.keptMode,
      createdMs,
    );
    return { id: Number(result.lastInsertRowid), ...conflict, createdMs };
  }

  /**
   * The rejections, newest first.
   *
   * @param limit The most rows returned. @default {1000}
   * @returns The rows.
   */
  list(limit = 1000): MasterConflict[] {
    return this.#statement(`SELECT ${COLUMNS} FROM master_conflicts ORDER BY id DESC LIMIT ?`)
      .all(limit).map((row) => {
        const read = columns(row);
        // Keys in the order `--json` always printed them: id, sandboxId, then the rest.
        const { id, ...rest } = readKeptRejection(read);
        return { id, sandboxId: read.text("sandboxId"), ...rest };
      });
  }

  /** How many rejections are kept in all. */
  count(): number {
    return columns(this.#statement("SELECT COUNT(*) AS n FROM master_conflicts").get()!)
      .integer("n");
  }
}

/**
 * The content hashes the master keeps for rejected write-backs, for the CAS sweep's keep
 * set. Empty when the database never was a master's.
 *
 * @param db A workspace's database.
 * @returns The hashes.
 */
export function keptConflictHashes(db: DatabaseSync): Set<string> {
  const table = db.prepare(
    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'master_conflicts'",
  ).get();
  if (!table) return new Set();
  const rows = db.prepare(
    "SELECT DISTINCT kept_hash AS hash FROM master_conflicts WHERE kept_hash IS NOT NULL",
  ).all();
  return new Set(rows.map((row) => columns(row).text("hash")));
}
