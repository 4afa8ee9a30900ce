import { DatabaseSync } from "node:sqlite";
import { errorMessage } from "../log/mod.ts";

/** Options for {@linkcode openDatabase}. */
export interface OpenDatabaseOptions {
  /** Milliseconds a statement waits on a lock held by another connection. @default {5000} */
  busyTimeoutMs?: number;
  /** Open without write access. @default {false} */
  readOnly?: boolean;
}

/** A database that could not be opened or read: a one-line reason for the user. */
export class DatabaseError extends Error {
  /** Makes the error with a message saying what is wrong. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "DatabaseError";
  }
}

/**
 * Opens (creating if needed) a SQLite database in WAL mode with a busy timeout,
 * `synchronous=NORMAL` (durable across process crashes in WAL mode) and foreign keys on.
 *
 * @param path The database file.
 * @returns The open connection.
 * @throws {DatabaseError} When the file is not a database, is locked, or cannot be opened.
 */
export function openDatabase(path: string, options: OpenDatabaseOptions = {}): DatabaseSync {
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(path, { readOnly: options.readOnly ?? false });
    db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
    if (!options.readOnly) db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = NORMAL");
    db.exec("PRAGMA foreign_keys = ON");
    // Touch the schema so a corrupt or foreign file fails here, not on first use.
    db.prepare("SELECT count(*) FROM sqlite_master").get();
    return db;
  } catch (error) {
    try {
      db?.close();
    } catch { /* already failing; the first error is the one to report */ }
    throw new DatabaseError(`Cannot open database "${path}": ${errorMessage(error)}`, {
      cause: error,
    });
  }
}
