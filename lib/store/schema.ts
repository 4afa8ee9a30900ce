import type { Migration } from "../db/mod.ts";

/**
 * The store's schema history, oldest first. Never edit a released step: append a new one.
 *
 * - `iterations`: one immutable row per version of a path. `sequence` is the workspace-wide
 *   change number; AUTOINCREMENT guarantees it is never reused, so it never goes backwards.
 * - `paths`: each path's latest iteration, so "now" queries do not scan history.
 * - `file_state`: what the scanner last saw on disk per path (a stat cache), so a restart
 *   re-hashes only files whose size, mtime, inode or mode changed.
 * - `meta`: small key/value facts (workspace id, clean shutdown marker, …).
 * - `paths_sequence` (version 2): `paths` by sequence, so a replay page (`latestSince`)
 *   reads the paths after its position in order and stops at its limit, instead of
 *   scanning and sorting every path once per page (quadratic in a replay of a large tree).
 */
export const STORE_MIGRATIONS: Migration[] = [
  `CREATE TABLE iterations (
     sequence  INTEGER PRIMARY KEY AUTOINCREMENT,
     path      TEXT    NOT NULL,
     iteration INTEGER NOT NULL,
     timestamp INTEGER NOT NULL,
     size      INTEGER NOT NULL,
     hash      TEXT    NOT NULL,
     mode      INTEGER NOT NULL,
     deleted   INTEGER NOT NULL CHECK (deleted IN (0, 1)),
     origin    TEXT    NOT NULL,
     UNIQUE (path, iteration)
   );
   CREATE INDEX iterations_path_sequence ON iterations (path, sequence);
   CREATE INDEX iterations_timestamp ON iterations (timestamp);
   CREATE TABLE paths (
     path      TEXT PRIMARY KEY,
     sequence  INTEGER NOT NULL REFERENCES iterations (sequence),
     iteration INTEGER NOT NULL,
     deleted   INTEGER NOT NULL
   ) WITHOUT ROWID;
   CREATE TABLE file_state (
     path     TEXT PRIMARY KEY,
     size     INTEGER NOT NULL,
     mtime_ms INTEGER NOT NULL,
     ino      INTEGER NOT NULL,
     mode     INTEGER NOT NULL,
     hash     TEXT    NOT NULL
   ) WITHOUT ROWID;
   CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;`,
  `CREATE INDEX paths_sequence ON paths (sequence)`,
];
