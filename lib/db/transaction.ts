import type { DatabaseSync } from "node:sqlite";

/**
 * Runs `work` inside `BEGIN IMMEDIATE … COMMIT`, rolling back if it throws. IMMEDIATE takes
 * the write lock up front, so two processes never interleave a read-then-write.
 *
 * @returns What `work` returned.
 */
export function inTransaction<T>(db: DatabaseSync, work: () => T): T {
  if (db.isTransaction) return work();
  db.exec("BEGIN IMMEDIATE");
  try {
    const result = work();
    db.exec("COMMIT");
    return result;
  } catch (error) {
    if (db.isTransaction) db.exec("ROLLBACK");
    throw error;
  }
}
