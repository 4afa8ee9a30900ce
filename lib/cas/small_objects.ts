import type { DatabaseSync, StatementSync } from "node:sqlite";
import { columns, inTransaction, migrate, statementCache } from "../db/mod.ts";

/**
 * Objects under this size live in a SQLite table rather than one file each. A small file
 * costs a file creation, two fsyncs and a rename, about a millisecond on a busy disk; a
 * row in the write-ahead log costs a few page writes, and SQLite reads blobs of this size
 * faster than the file system does (sqlite.org, "Internal Versus External BLOBs").
 */
export const SMALL_OBJECT_LIMIT = 64 * 1024;

/**
 * Bytes of rows held for a later commit beyond which they are committed at once: a scan of
 * a large tree then never holds it all in memory. Committing early is always safe; only
 * committing late would not be.
 */
const HELD_MAX_BYTES = 16 * 1024 * 1024;

const MIGRATIONS = [
  `CREATE TABLE cas_objects (
     hash TEXT NOT NULL PRIMARY KEY,
     stored_at INTEGER NOT NULL,
     bytes BLOB NOT NULL
   )`,
];

/** What {@linkcode SmallObjects.sweep} removed. */
export interface SmallSweep {
  removed: number;
  bytes: number;
}

/**
 * The CAS's table of small objects, in a database it shares with whoever records the
 * hashes (normally the store): a row committed before the iteration that references it
 * reaches the same write-ahead log first, so no crash can keep the reference without the
 * content. Rows are kept as written; readers verify them (see `Cas`).
 *
 * A row can be held for a later commit ({@linkcode SmallObjects.hold}): it is read like a
 * committed one, and {@linkcode SmallObjects.commitHeld} writes all held rows in one
 * transaction.
 */
export class SmallObjects {
  readonly #db: DatabaseSync;
  readonly #statement: (sql: string) => StatementSync;
  /** Whether rows may be added (the database was opened for writing). */
  readonly writable: boolean;
  /** Rows held for the next {@linkcode SmallObjects.commitHeld}, and their bytes. */
  readonly #held = new Map<string, Uint8Array>();
  #heldBytes = 0;

  private constructor(db: DatabaseSync, writable: boolean) {
    this.#db = db;
    this.#statement = statementCache(db);
    this.writable = writable;
  }

  /**
   * The table in `db`, created when the connection may write; `null` when it is read-only
   * and the table was never made (a database from before small objects).
   */
  static open(db: DatabaseSync): SmallObjects | null {
    try {
      migrate(db, "cas", MIGRATIONS);
      return new SmallObjects(db, true);
    } catch (error) {
      if (!isReadOnlyError(error)) throw error;
    }
    const table = db.prepare(
      "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'cas_objects'",
    ).get();
    return table === undefined ? null : new SmallObjects(db, false);
  }

  /**
   * The bytes of a held row, which hash to `hash` by construction (see
   * {@linkcode SmallObjects.hold}): a read need not hash them again. `undefined` when the
   * row is not held (committed or absent).
   */
  held(hash: string): Uint8Array | undefined {
    return this.#held.get(hash);
  }

  /** The stored (or held) bytes, unverified; `null` when absent. */
  get(hash: string): Uint8Array | null {
    const held = this.#held.get(hash);
    if (held) return held;
    const row = this.#statement("SELECT bytes FROM cas_objects WHERE hash = ?").get(hash) as
      | { bytes: Uint8Array }
      | undefined;
    return row?.bytes ?? null;
  }

  /**
   * The stored (or held) bytes of each of `hashes` with at most `maxBytes`, unverified,
   * read in one read transaction (unless one is open already): a single read outside a
   * transaction takes and releases SQLite's locks each time, about as long as the read.
   * Absent and larger rows are left out. Synchronous, so the transaction lasts only these
   * reads: it never holds off a checkpoint for longer than that.
   */
  getMany(hashes: Iterable<string>, maxBytes: number): Map<string, Uint8Array> {
    const found = new Map<string, Uint8Array>();
    const read = () => {
      for (const hash of hashes) {
        const bytes = this.get(hash);
        if (bytes !== null && bytes.length <= maxBytes) found.set(hash, bytes);
      }
    };
    if (this.#db.isTransaction) {
      read();
      return found;
    }
    this.#db.exec("BEGIN");
    try {
      read();
    } finally {
      // Nothing was written: a rollback ends the read as a commit would.
      if (this.#db.isTransaction) this.#db.exec("ROLLBACK");
    }
    return found;
  }

  /** The stored (or held) size, without reading the bytes; `null` when absent. */
  size(hash: string): number | null {
    const held = this.#held.get(hash);
    if (held) return held.length;
    const row = this.#statement("SELECT length(bytes) AS size FROM cas_objects WHERE hash = ?")
      .get(hash);
    return row ? columns(row).integer("size") : null;
  }

  /** Stores bytes under `hash`; an existing row is only marked as stored at `now`. */
  put(hash: string, bytes: Uint8Array, now: number): void {
    this.#statement(
      `INSERT INTO cas_objects (hash, stored_at, bytes) VALUES (?, ?, ?)
       ON CONFLICT (hash) DO UPDATE SET stored_at = excluded.stored_at
       WHERE stored_at < excluded.stored_at`,
    ).run(hash, now, bytes);
  }

  /**
   * Holds a row for the next {@linkcode SmallObjects.commitHeld}; readable meanwhile.
   * `bytes` must hash to `hash`: every caller has just computed or checked that hash, so
   * reads of a held row skip the check ({@linkcode SmallObjects.held}).
   */
  hold(hash: string, bytes: Uint8Array): void {
    this.#heldBytes += bytes.length - (this.#held.get(hash)?.length ?? 0);
    this.#held.set(hash, bytes);
    if (this.#heldBytes > HELD_MAX_BYTES) this.commitHeld();
  }

  /**
   * Commits every held row in one transaction, as {@linkcode SmallObjects.put} does each.
   *
   * @param only Just the rows of these hashes (see {@linkcode SmallObjects.writeHeld}).
   */
  commitHeld(only?: ReadonlySet<string>): void {
    if (this.#held.size === 0) return;
    inTransaction(this.#db, () => this.writeHeld(only))();
  }

  /**
   * Writes every held row inside the transaction the caller has open on this database
   * (one commit for the rows and what references them), keeping them held: the caller
   * calls the returned function once that transaction has committed, which forgets the
   * rows it wrote. Should the transaction roll back instead, they stay held, readable
   * and committed by a later {@linkcode SmallObjects.commitHeld}.
   *
   * With `only`, just the held rows of those hashes are written (what the transaction
   * references): the others stay held, read from memory until their own record commits
   * them, rather than committed now and read back from the table moments later.
   *
   * @param only The hashes whose rows to write; every held row when missing.
   * @returns Forgets the rows written, once they are committed.
   * @throws {Error} When no transaction is open.
   */
  writeHeld(only?: ReadonlySet<string>): () => void {
    if (!this.#db.isTransaction) throw new Error("Held rows are written inside a transaction");
    if (this.#held.size === 0) return () => {};
    const now = Date.now();
    const written = only === undefined
      ? [...this.#held]
      : [...this.#held].filter(([hash]) => only.has(hash));
    for (const [hash, bytes] of written) this.put(hash, bytes, now);
    return () => {
      for (const [hash, bytes] of written) {
        // A row held again meanwhile (the same hash put again) stays for the next commit.
        if (this.#held.get(hash) !== bytes) continue;
        this.#held.delete(hash);
        this.#heldBytes -= bytes.length;
      }
    };
  }

  /** Removes a row, held or stored (found corrupt), when the connection may write. */
  remove(hash: string): void {
    const held = this.#held.get(hash);
    if (held) {
      this.#held.delete(hash);
      this.#heldBytes -= held.length;
      return;
    }
    if (this.writable) this.#statement("DELETE FROM cas_objects WHERE hash = ?").run(hash);
  }

  /**
   * Removes rows stored before `cutoff` (epoch ms) that `kept` does not keep. The rows are
   * read one at a time and only those to remove are remembered, never every row at once
   * (a large store holds 100,000 of them).
   */
  sweep(kept: (hash: string) => boolean, cutoff: number): SmallSweep {
    const rows: Array<{ hash: string; size: number }> = [];
    const older = this.#statement(
      "SELECT hash, length(bytes) AS size FROM cas_objects WHERE stored_at < ?",
    ).iterate(cutoff);
    for (const row of older) {
      const read = columns(row);
      const hash = read.text("hash");
      if (!kept(hash)) rows.push({ hash, size: read.integer("size") });
    }
    const result: SmallSweep = { removed: 0, bytes: 0 };
    const remove = this.#statement("DELETE FROM cas_objects WHERE hash = ? AND stored_at < ?");
    inTransaction(this.#db, () => {
      for (const { hash, size } of rows) {
        // Checked again in the statement: a put since the query keeps its row.
        if (remove.run(hash, cutoff).changes === 0) continue;
        result.removed++;
        result.bytes += size;
      }
    });
    return result;
  }

  /** How many rows, and their bytes. */
  stats(): { objects: number; bytes: number } {
    const row = this.#statement(
      "SELECT count(*) AS objects, coalesce(sum(length(bytes)), 0) AS bytes FROM cas_objects",
    ).get()!;
    return { objects: columns(row).integer("objects"), bytes: columns(row).integer("bytes") };
  }
}

function isReadOnlyError(error: unknown): boolean {
  return error instanceof Error && /readonly|read-only/i.test(error.message);
}
