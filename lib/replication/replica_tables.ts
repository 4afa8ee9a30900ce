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

/** Hashes asked about at once in one query (each is a bound variable). */
const HASHES_PER_QUERY = 500;

/**
 * Which of `hashes` this replica keeps for reasons of its own, not as a copy of the
 * master's content: the content of an iteration the master did not make (a local change, a
 * restore, a rollback), of a journal entry, of a kept conflict, or of a master version held
 * back behind a local change. A sandbox never takes those out of its CAS.
 *
 * @param db The replica's database (the store's connection).
 * @param hashes Content or chunk hashes.
 * @returns Those kept.
 */
export function contentsKeptHere(db: DatabaseSync, hashes: readonly string[]): Set<string> {
  const kept = new Set<string>();
  for (let at = 0; at < hashes.length; at += HASHES_PER_QUERY) {
    const some = hashes.slice(at, at + HASHES_PER_QUERY);
    const list = some.map(() => "?").join(", ");
    const rows = db.prepare(
      `SELECT hash FROM iterations WHERE origin <> 'master' AND hash IN (${list})
       UNION SELECT hash FROM replica_journal WHERE hash IN (${list})
       UNION SELECT kept_hash FROM replica_conflicts WHERE kept_hash IN (${list})
       UNION SELECT deferred_hash FROM replica_paths WHERE deferred_hash IN (${list})`,
    ).all(...some, ...some, ...some, ...some) as { hash: string }[];
    for (const row of rows) kept.add(row.hash);
  }
  return kept;
}
