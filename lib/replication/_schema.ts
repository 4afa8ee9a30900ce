import type { Migration } from "../db/mod.ts";

/**
 * The replica's tables, in the replica's own database (component `"replica"`). Never edit
 * a released step: append a new one.
 *
 * | table | holds |
 * | --- | --- |
 * | `replica_paths` | per path: the master's state as last applied (`master_seq` is the `master_rowid_seen` of the next local write), the master sequence of this replica's own last accepted write, and a notification deferred while write-backs of the path were unanswered |
 * | `replica_journal` | every local change to send back, with its state (`pending`, `sent`, `accepted`, `rejected`, `refused`) |
 * | `replica_conflicts` | write-backs the master rejected, with the reason and the kept content |
 * | `replica_applying` | per batch being applied: the master versions written to disk and not yet recorded, as JSON `[[path, sequence, hash, mode], …]` |
 *
 * The applied master sequence and the sandbox id are store meta keys (`replica.*`).
 */
export const REPLICA_MIGRATIONS: Migration[] = [
  `CREATE TABLE replica_paths (
     path             TEXT PRIMARY KEY,
     master_seq       INTEGER NOT NULL DEFAULT 0,
     hash             TEXT    NOT NULL DEFAULT '',
     mode             INTEGER NOT NULL DEFAULT 0,
     deleted          INTEGER NOT NULL DEFAULT 1,
     accepted_seq     INTEGER NOT NULL DEFAULT 0,
     deferred_seq     INTEGER,
     deferred_hash    TEXT,
     deferred_mode    INTEGER,
     deferred_deleted INTEGER
   ) WITHOUT ROWID;
   CREATE TABLE replica_journal (
     local_seq   INTEGER PRIMARY KEY AUTOINCREMENT,
     source_seq  INTEGER NOT NULL,
     path        TEXT    NOT NULL,
     operation   TEXT    NOT NULL CHECK (operation IN ('write', 'delete', 'rename', 'chmod')),
     new_path    TEXT,
     hash        TEXT,
     size        INTEGER NOT NULL,
     mode        INTEGER NOT NULL,
     deleted     INTEGER NOT NULL,
     master_seen INTEGER NOT NULL,
     state       TEXT    NOT NULL DEFAULT 'pending'
                 CHECK (state IN ('pending', 'sent', 'accepted', 'rejected', 'refused')),
     reason      TEXT,
     master_seq  INTEGER,
     created_ms  INTEGER NOT NULL,
     resolved_ms INTEGER
   );
   CREATE INDEX replica_journal_open ON replica_journal (state, local_seq);
   CREATE TABLE replica_conflicts (
     id          INTEGER PRIMARY KEY AUTOINCREMENT,
     local_seq   INTEGER NOT NULL,
     path        TEXT    NOT NULL,
     operation   TEXT    NOT NULL,
     reason      TEXT    NOT NULL,
     kept_hash   TEXT,
     kept_size   INTEGER NOT NULL,
     kept_mode   INTEGER NOT NULL,
     created_ms  INTEGER NOT NULL,
     resolved_ms INTEGER,
     resolution  TEXT
   );
   -- Journal numbers start from the creation time in microseconds, so a journal made
   -- afresh under a reused sandbox id never repeats the numbers of an older one.
   INSERT INTO sqlite_sequence (name, seq) VALUES ('replica_journal', ${Date.now() * 1000});`,
  `CREATE TABLE replica_applying (
     id       INTEGER PRIMARY KEY,
     versions TEXT NOT NULL
   );`,
  // Open conflicts by path: every accepted write-back looks for those it settles.
  `CREATE INDEX replica_conflicts_open ON replica_conflicts (path) WHERE resolved_ms IS NULL;`,
];

/**
 * The master's tables, in the master's database (component `"master"`).
 *
 * | table | holds |
 * | --- | --- |
 * | `master_replicas` | per sandbox id: the highest sequence it acknowledged, when it was first and last seen |
 * | `master_writebacks` | the outcome of every write-back entry, by sandbox id and local sequence, so an entry resent after a lost answer is answered again and never applied twice |
 * | `master_conflicts` | write-back entries the master rejected (a conflict, a forbidden change, a filtered path, a failure), with the sender, the reason and the hash of the content kept in the master's CAS: what a sandbox thrown away took along is still here |
 * | `master_applying` | each state a write-back entry being written to the workspace may leave a path in (a rename leaves two paths, and passes through two modes when it changes the mode), until its outcome is stored: what a restart finds of them on disk is theirs, not the agent's |
 */
export const MASTER_MIGRATIONS: Migration[] = [
  `CREATE TABLE master_replicas (
     sandbox_id     TEXT PRIMARY KEY,
     acked_sequence INTEGER NOT NULL DEFAULT 0,
     first_seen_ms  INTEGER NOT NULL,
     last_seen_ms   INTEGER NOT NULL,
     remote         TEXT    NOT NULL DEFAULT ''
   ) WITHOUT ROWID;
   CREATE TABLE master_writebacks (
     sandbox_id TEXT    NOT NULL,
     local_seq  INTEGER NOT NULL,
     accepted   INTEGER NOT NULL,
     master_seq INTEGER NOT NULL,
     reason     TEXT    NOT NULL DEFAULT '',
     decided_ms INTEGER NOT NULL,
     PRIMARY KEY (sandbox_id, local_seq)
   ) WITHOUT ROWID;`,
  `CREATE TABLE master_applying (
     sandbox_id TEXT    NOT NULL,
     local_seq  INTEGER NOT NULL,
     path       TEXT    NOT NULL,
     hash       TEXT    NOT NULL,
     mode       INTEGER NOT NULL,
     deleted    INTEGER NOT NULL,
     PRIMARY KEY (sandbox_id, local_seq)
   ) WITHOUT ROWID;`,
  // Several states per entry: a rename notes both of its paths.
  `CREATE TABLE master_applying_states (
     sandbox_id TEXT    NOT NULL,
     local_seq  INTEGER NOT NULL,
     path       TEXT    NOT NULL,
     hash       TEXT    NOT NULL,
     mode       INTEGER NOT NULL,
     deleted    INTEGER NOT NULL,
     PRIMARY KEY (sandbox_id, local_seq, path, hash, mode, deleted)
   ) WITHOUT ROWID;
   INSERT INTO master_applying_states SELECT sandbox_id, local_seq, path, hash, mode, deleted
     FROM master_applying;
   DROP TABLE master_applying;
   ALTER TABLE master_applying_states RENAME TO master_applying;`,
  `CREATE TABLE master_conflicts (
     id         INTEGER PRIMARY KEY AUTOINCREMENT,
     sandbox_id TEXT    NOT NULL,
     local_seq  INTEGER NOT NULL,
     path       TEXT    NOT NULL,
     operation  TEXT    NOT NULL,
     reason     TEXT    NOT NULL,
     kept_hash  TEXT,
     kept_size  INTEGER NOT NULL,
     kept_mode  INTEGER NOT NULL,
     created_ms INTEGER NOT NULL
   );
   CREATE INDEX master_conflicts_hash ON master_conflicts (kept_hash);`,
];
