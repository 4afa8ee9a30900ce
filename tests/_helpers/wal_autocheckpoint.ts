/**
 * A connection's `wal_autocheckpoint` setting: 0 while a `BackgroundCheckpointer` runs
 * for it (the writer no longer checkpoints in its commits), SQLite's 1,000 pages otherwise.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import { columns } from "../../lib/db/mod.ts";

/** The pages of WAL after which `db`'s commits checkpoint (0: they never do). */
export function autocheckpoint(db: DatabaseSync): number {
  return columns(db.prepare("PRAGMA wal_autocheckpoint").get()!).integer("wal_autocheckpoint");
}
