import type { DatabaseSync } from "node:sqlite";
import { isContentHash } from "../cas/mod.ts";

/** A column that holds CAS content hashes, and which of its rows count. */
export interface ContentReference {
  /** The table. */
  table: string;
  /** The column holding content hashes. */
  column: string;
  /** SQL condition on the row, if only some rows reference content. */
  where?: string;
}

/**
 * Every column of Chronicle's database that names CAS content a restored instance needs:
 * history, snapshots, a replica's write-backs not yet answered, and the content the
 * master rejected (kept, never silently lost). Columns named like a hash that are not
 * content, or only mirror the above, are deliberately absent: the snapshot chain's
 * `snapshots.hash`, the scanner's stat cache `file_state.hash`, and `replica_paths`
 * (the master's state as applied, already in `iterations`; a deferred notification's
 * content is fetched again). A table not in a database is skipped.
 */
export const CONTENT_REFERENCES: readonly ContentReference[] = [
  { table: "iterations", column: "hash", where: "deleted = 0" },
  { table: "snapshot_files", column: "hash" },
  { table: "replica_journal", column: "hash", where: "state IN ('pending', 'sent')" },
  { table: "replica_conflicts", column: "kept_hash" },
];

/**
 * Lists the content hashes a database references (see {@linkcode CONTENT_REFERENCES}):
 * every non-deleted iteration (history included), every snapshot's captured files, and a
 * replica's unanswered write-backs and conflicts.
 *
 * @param db An open Chronicle database.
 * @param references The columns to read. @default {CONTENT_REFERENCES}
 * @returns The distinct hashes, sorted.
 */
export function referencedHashes(
  db: DatabaseSync,
  references: readonly ContentReference[] = CONTENT_REFERENCES,
): string[] {
  const tables = new Set(
    (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[])
      .map((row) => row.name),
  );
  const hashes = new Set<string>();
  for (const { table, column, where } of references) {
    if (!tables.has(table)) continue;
    const sql = `SELECT DISTINCT "${column}" AS hash FROM "${table}"${
      where ? ` WHERE ${where}` : ""
    }`;
    for (const row of db.prepare(sql).all() as { hash: unknown }[]) {
      if (typeof row.hash === "string" && isContentHash(row.hash)) hashes.add(row.hash);
    }
  }
  return [...hashes].sort();
}
