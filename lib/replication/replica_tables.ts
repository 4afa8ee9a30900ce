import type { DatabaseSync } from "node:sqlite";
import { migrate } from "../db/mod.ts";
import { REPLICA_MIGRATIONS } from "./_schema.ts";
import { ApplyIntents } from "./apply_intents.ts";
import { ConflictLog } from "./conflict_log.ts";
import { ReplicaPaths } from "./replica_paths.ts";
import { WriteJournal } from "./write_journal.ts";

/** A replica's durable state, all in its own database. */
export interface ReplicaTables {
  /** Per-path view of the master. */
  paths: ReplicaPaths;
  /** Local changes to send back. */
  journal: WriteJournal;
  /** Rejected write-backs. */
  conflicts: ConflictLog;
  /** Master versions written to disk and not yet recorded. */
  intents: ApplyIntents;
}

/**
 * Migrates the replica's tables (component `"replica"`) into `db` and opens them. Usable
 * without a running replica, e.g. by `chronicle conflicts`.
 *
 * @param db The replica's database (the store's connection).
 * @returns The tables.
 * @throws {DatabaseError} When the database holds a newer schema.
 */
export function openReplicaTables(db: DatabaseSync): ReplicaTables {
  migrate(db, "replica", REPLICA_MIGRATIONS);
  return {
    paths: new ReplicaPaths(db),
    journal: new WriteJournal(db),
    conflicts: new ConflictLog(db),
    intents: new ApplyIntents(db),
  };
}
