import type { DatabaseSync } from "node:sqlite";
import { DatabaseError } from "./open_database.ts";
import { inTransaction } from "./transaction.ts";

/** One schema step: SQL run once, in order, inside a transaction. */
export type Migration = string | ((db: DatabaseSync) => void);

/**
 * Brings one component's tables up to date. Each component (store, snapshots, journal)
 * keeps its own version in `schema_versions`, so components evolve independently in
 * one database file.
 *
 * @param db An open database.
 * @param component The owner of the migrations, e.g. `"store"`.
 * @param migrations Every migration the component has ever had, oldest first.
 * @throws {DatabaseError} When the database holds a newer schema than this code knows.
 */
export function migrate(db: DatabaseSync, component: string, migrations: Migration[]): void {
  db.exec(
    "CREATE TABLE IF NOT EXISTS schema_versions (component TEXT PRIMARY KEY, version INTEGER NOT NULL)",
  );
  inTransaction(db, () => {
    const row = db.prepare("SELECT version FROM schema_versions WHERE component = ?").get(
      component,
    ) as { version: number } | undefined;
    const current = row?.version ?? 0;
    if (current > migrations.length) {
      throw new DatabaseError(
        `Database schema for "${component}" is version ${current}, newer than this Chronicle knows (${migrations.length})`,
      );
    }
    for (let version = current; version < migrations.length; version++) {
      const step = migrations[version]!;
      if (typeof step === "string") db.exec(step);
      else step(db);
    }
    db.prepare(
      "INSERT INTO schema_versions (component, version) VALUES (?, ?) ON CONFLICT(component) DO UPDATE SET version = excluded.version",
    ).run(component, migrations.length);
  });
}
