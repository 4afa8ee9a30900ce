import type { DatabaseSync } from "node:sqlite";
import type { Migration } from "../db/mod.ts";
import { headSeal } from "./canonical_encoding.ts";

/**
 * The snapshot tables' schema history, oldest first. Never edit a released step: append.
 *
 * - `snapshots`: one row per snapshot; `number` is its chain position.
 * - `snapshot_files`: the captured paths of each snapshot (content lives in the CAS).
 * - `snapshot_transactions`: transactions and their status (not part of the chain).
 * - `snapshot_chain`: the single head record: newest number and hash, the anchor left by
 *   pruning (oldest retained number and its previous hash), and the seal over them.
 */
export const SNAPSHOT_MIGRATIONS: Migration[] = [
  (db: DatabaseSync) => {
    db.exec(`
      CREATE TABLE snapshots (
        number         INTEGER PRIMARY KEY,
        id             TEXT    NOT NULL UNIQUE,
        timestamp      INTEGER NOT NULL,
        action_type    TEXT    NOT NULL,
        summary        TEXT    NOT NULL,
        transaction_id TEXT,
        previous_hash  TEXT    NOT NULL,
        hash           TEXT    NOT NULL
      );
      CREATE INDEX snapshots_transaction ON snapshots (transaction_id);
      CREATE TABLE snapshot_files (
        snapshot_number INTEGER NOT NULL,
        path            TEXT    NOT NULL,
        state           TEXT    NOT NULL,
        kind            TEXT    NOT NULL,
        hash            TEXT    NOT NULL,
        size            INTEGER NOT NULL,
        mode            INTEGER NOT NULL,
        PRIMARY KEY (snapshot_number, path)
      ) WITHOUT ROWID;
      CREATE INDEX snapshot_files_hash ON snapshot_files (hash);
      CREATE TABLE snapshot_transactions (
        id          TEXT    PRIMARY KEY,
        status      TEXT    NOT NULL CHECK (status IN ('active', 'committed', 'rolled_back')),
        started_at  INTEGER NOT NULL,
        finished_at INTEGER
      ) WITHOUT ROWID;
      CREATE TABLE snapshot_chain (
        singleton     INTEGER PRIMARY KEY CHECK (singleton = 1),
        head_number   INTEGER NOT NULL,
        head_hash     TEXT    NOT NULL,
        anchor_number INTEGER NOT NULL,
        anchor_hash   TEXT    NOT NULL,
        seal          TEXT    NOT NULL
      );`);
    const empty = { headNumber: 0, headHash: "", anchorNumber: 1, anchorHash: "" };
    db.prepare(
      "INSERT INTO snapshot_chain (singleton, head_number, head_hash, anchor_number, anchor_hash, seal) VALUES (1, 0, '', 1, '', ?)",
    ).run(headSeal(empty));
  },
];
