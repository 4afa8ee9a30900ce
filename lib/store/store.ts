import type { DatabaseSync, SQLInputValue, StatementSync } from "node:sqlite";
import {
  columns,
  inTransaction,
  migrate,
  openDatabase,
  type Row,
  statementCache,
} from "../db/mod.ts";
import { STORE_MIGRATIONS } from "./schema.ts";
import type { HashCollector, Iteration, NewIteration } from "./types.ts";
import {
  type FileState,
  isSameState,
  iterationFromRow,
  type LiveState,
  toFileState,
} from "./rows.ts";

/** Options for {@linkcode Store.list}. */
export interface ListOptions {
  /** Only paths at or beneath this folder (normalized, relative). @default {""} */
  dir?: string;
  /** The tree as it was at this master sequence. @default {the current sequence} */
  atSequence?: number;
}

/** Meta key under which a running Chronicle records its workspace root (see `Store.setMeta`). */
export const WORKSPACE_ROOT_META = "workspace_root";

/** Called with the iterations of each commit, in sequence order. */
export type RecordListener = (recorded: Iteration[]) => void;

const COLUMNS = "sequence, path, iteration, timestamp, size, hash, mode, deleted, origin";
/** {@linkcode COLUMNS} of the `iterations` table aliased `i`. */
const I_COLUMNS = COLUMNS.split(", ").map((column) => `i.${column}`).join(", ");
/** The columns of the `file_state` table aliased `f`, as a `FileState`. */
const F_COLUMNS = "f.path, f.size, f.mtime_ms AS mtimeMs, f.ino, f.mode, f.hash";
/** The columns a {@linkcode LiveState} is read from (see `toLiveState`). */
const LIVE_COLUMNS = `p.path, i.hash, i.mode, f.size AS fSize, f.mtime_ms AS fMtime,
  f.ino AS fIno, f.mode AS fMode, f.hash AS fHash`;

/** A live path's row of {@linkcode LIVE_COLUMNS}. */
function toLiveState(row: Row): LiveState {
  const read = columns(row);
  const path = read.text("path");
  const stateHash = read.textOrNull("fHash");
  return {
    path,
    hash: read.text("hash"),
    mode: read.integer("mode"),
    state: stateHash === null ? null : {
      path,
      size: read.integer("fSize"),
      mtimeMs: read.number("fMtime"),
      ino: read.integer("fIno"),
      mode: read.integer("fMode"),
      hash: stateHash,
    },
  };
}

/** Options for {@linkcode Store.record}. */
export interface RecordOptions {
  /**
   * Writes to the same database run first inside the record's transaction, committed
   * with it or rolled back with it. @default {undefined}
   */
  alongside?: () => void;
}

/** A file state to remember, or a path to forget. */
export type FileStateChange = FileState | { path: string; forget: true };

/**
 * The versioned store: every change to every path is an immutable {@linkcode Iteration}
 * in SQLite. Content lives in the CAS; the store holds only its hash.
 */
export class Store {
  /** The open connection; other components migrate their own tables into it. */
  readonly db: DatabaseSync;
  readonly #statement: (sql: string) => StatementSync;
  readonly #listeners = new Set<RecordListener>();
  /** The highest sequence the listeners have been told about. */
  #announced: number;

  private constructor(db: DatabaseSync) {
    this.db = db;
    this.#statement = statementCache(db);
    this.#announced = this.sequence();
  }

  /**
   * Opens the store in `databasePath`, creating and migrating it as needed.
   *
   * @throws {DatabaseError} When the file cannot be opened or is not a Chronicle database.
   */
  static open(databasePath: string): Store {
    const db = openDatabase(databasePath);
    try {
      migrate(db, "store", STORE_MIGRATIONS);
    } catch (error) {
      db.close();
      throw error;
    }
    return new Store(db);
  }

  /** Closes the connection. */
  close(): void {
    if (this.db.isOpen) this.db.close();
  }

  /**
   * Records changes as new iterations in one transaction. A change identical to its path's
   * latest iteration (same content and mode, or a deletion of a deleted or unknown path)
   * records nothing, so a change seen twice (write-through, then the watcher) is kept once.
   *
   * @param changes The changes.
   * @param fileStates What the scanner saw of these paths, saved in the same transaction
   * (see {@linkcode Store.saveFileStates}).
   * @param options `alongside`: more writes to this database, run first inside the same
   * transaction (the CAS's held rows of the content recorded: one commit for both); not
   * run when there is nothing to record.
   * @returns The iterations recorded, in sequence order; listeners hear of them once
   * they are committed.
   */
  record(
    changes: NewIteration[],
    fileStates: FileStateChange[] = [],
    options: RecordOptions = {},
  ): Iteration[] {
    if (changes.length === 0 && fileStates.length === 0) return [];
    const recorded = inTransaction(this.db, () => {
      options.alongside?.();
      const out: Iteration[] = [];
      // Looked up at once; a path changed twice in the batch sees its own first change.
      const latest = this.latestOf(changes.map((change) => change.path));
      for (const change of changes) {
        const iteration = this.#recordOne(change, latest.get(change.path));
        if (iteration) {
          out.push(iteration);
          latest.set(iteration.path, iteration);
        }
      }
      this.saveFileStates(fileStates);
      return out;
    });
    this.#announce(recorded);
    return recorded;
  }

  /**
   * Tells the listeners about iterations another process (a CLI command, a second
   * Chronicle) recorded in this database since they last heard. A running daemon calls
   * this on a short interval, so every iteration reaches its listeners whoever wrote it.
   *
   * @returns The newly announced iterations.
   */
  pollExternal(): Iteration[] {
    const fresh = this.changesSince(this.#announced);
    this.#announce(fresh);
    return fresh;
  }

  #announce(recorded: Iteration[]): void {
    const unseen = recorded.filter((iteration) => iteration.sequence > this.#announced);
    if (unseen.length === 0) return;
    this.#announced = unseen[unseen.length - 1]!.sequence;
    for (const listener of this.#listeners) listener(unseen);
  }

  #recordOne(change: NewIteration, previous: Iteration | undefined): Iteration | undefined {
    if (isSameState(previous, change)) return undefined;
    const deleted = change.deleted;
    const row = {
      path: change.path,
      iteration: (previous?.iteration ?? 0) + 1,
      timestamp: change.timestamp ?? Date.now(),
      size: deleted ? 0 : change.size,
      hash: deleted ? "" : change.hash,
      mode: deleted ? 0 : change.mode,
      deleted,
      origin: change.origin ?? "local",
    };
    const result = this.#statement(
      "INSERT INTO iterations (path, iteration, timestamp, size, hash, mode, deleted, origin) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    ).run(
      row.path,
      row.iteration,
      row.timestamp,
      row.size,
      row.hash,
      row.mode,
      deleted ? 1 : 0,
      row.origin,
    );
    const sequence = Number(result.lastInsertRowid);
    this.#statement(
      "INSERT INTO paths (path, sequence, iteration, deleted) VALUES (?, ?, ?, ?) ON CONFLICT (path) DO UPDATE SET sequence = excluded.sequence, iteration = excluded.iteration, deleted = excluded.deleted",
    ).run(row.path, sequence, row.iteration, deleted ? 1 : 0);
    return { ...row, sequence };
  }

  /** The path's latest iteration, a deletion included; `undefined` for an unknown path. */
  latest(path: string): Iteration | undefined {
    return this.#one(
      `SELECT ${I_COLUMNS} FROM paths p JOIN iterations i ON i.sequence = p.sequence WHERE p.path = ?`,
      path,
    );
  }

  /** The latest iteration of each of `paths` the store knows, deletions included: one query. */
  latestOf(paths: string[]): Map<string, Iteration> {
    if (paths.length === 0) return new Map();
    const found = this.#all(
      `SELECT ${I_COLUMNS} FROM json_each(?) j JOIN paths p ON p.path = j.value
       JOIN iterations i ON i.sequence = p.sequence`,
      JSON.stringify(paths),
    );
    return new Map(found.map((iteration) => [iteration.path, iteration]));
  }

  /** Every iteration of the path, oldest first; only those after `afterSequence` when given. */
  history(path: string, options: { afterSequence?: number } = {}): Iteration[] {
    return this.#all(
      `SELECT ${COLUMNS} FROM iterations WHERE path = ? AND sequence > ? ORDER BY iteration`,
      path,
      options.afterSequence ?? 0,
    );
  }

  /** Iteration `n` of the path, or `undefined`. */
  iteration(path: string, n: number): Iteration | undefined {
    return this.#one(
      `SELECT ${COLUMNS} FROM iterations WHERE path = ? AND iteration = ?`,
      path,
      n,
    );
  }

  /** The iteration that took this sequence number, or `undefined`. */
  bySequence(sequence: number): Iteration | undefined {
    return this.#one(`SELECT ${COLUMNS} FROM iterations WHERE sequence = ?`, sequence);
  }

  /** Live (not deleted) paths with their latest iteration, sorted by path. */
  list(options: ListOptions = {}): Iteration[] {
    const dir = options.dir ?? "";
    if (options.atSequence === undefined) {
      const [where, args] = underFolder("p.path", dir);
      return this.#all(
        `SELECT ${I_COLUMNS} FROM paths p JOIN iterations i ON i.sequence = p.sequence
         WHERE p.deleted = 0 AND ${where} ORDER BY p.path`,
        ...args,
      );
    }
    const [where, args] = underFolder("path", dir);
    return this.#all(
      `SELECT ${I_COLUMNS} FROM iterations i
       JOIN (SELECT path, MAX(sequence) AS s FROM iterations
             WHERE sequence <= ? AND ${where} GROUP BY path) m
         ON i.sequence = m.s
       WHERE i.deleted = 0 ORDER BY i.path`,
      options.atSequence,
      ...args,
    );
  }

  /**
   * Every iteration after `sequence`, ascending: at most `options.limit` of them, only
   * those made by `options.origin` when given, and none made by `options.notOrigins`.
   */
  changesSince(
    sequence: number,
    options: { limit?: number; origin?: string; notOrigins?: readonly string[] } = {},
  ): Iteration[] {
    const excluded = options.notOrigins ?? [];
    const byOrigin = (options.origin === undefined ? "" : "AND origin = ? ") +
      (excluded.length === 0 ? "" : `AND origin NOT IN (${excluded.map(() => "?").join(", ")})`);
    return this.#all(
      `SELECT ${COLUMNS} FROM iterations WHERE sequence > ? ${byOrigin} ORDER BY sequence LIMIT ?`,
      sequence,
      ...(options.origin === undefined ? [] : [options.origin]),
      ...excluded,
      options.limit ?? -1,
    );
  }

  /**
   * The latest iteration of each path changed after `sequence`, ascending by sequence: at
   * most `options.limit` of them. A replay reads in pages, each after the last one's
   * highest sequence, so a 100,000-path tree is never held whole (once per replica).
   *
   * @param sequence Only paths whose latest iteration is after this one.
   * @param options `limit`: the most to return (all when absent).
   * @returns The iterations.
   */
  latestSince(sequence: number, options: { limit?: number } = {}): Iteration[] {
    return this.#all(
      `SELECT ${I_COLUMNS} FROM paths p JOIN iterations i ON i.sequence = p.sequence
       WHERE p.sequence > ? ORDER BY p.sequence LIMIT ?`,
      sequence,
      options.limit ?? -1,
    );
  }

  /** The highest sequence recorded, 0 for an empty store. */
  sequence(): number {
    const row = this.#statement("SELECT MAX(sequence) AS s FROM iterations").get();
    return row ? columns(row).integerOrNull("s") ?? 0 : 0;
  }

  /** The highest sequence recorded at or before `timestampMs`, 0 when none was. */
  sequenceAt(timestampMs: number): number {
    const row = this.#statement("SELECT MAX(sequence) AS s FROM iterations WHERE timestamp <= ?")
      .get(timestampMs);
    return row ? columns(row).integerOrNull("s") ?? 0 : 0;
  }

  /**
   * Adds every content hash any iteration references to `hashes` (for a CAS sweep). Read
   * row by row, never as one array of every row (hundreds of thousands on a large store).
   *
   * @returns `hashes`.
   */
  addHashesTo<T extends HashCollector>(hashes: T): T {
    const rows = this.#statement("SELECT DISTINCT hash FROM iterations WHERE deleted = 0");
    for (const row of rows.iterate()) hashes.add(columns(row).text("hash"));
    return hashes;
  }

  /** Counts: live paths, iterations, and bytes of the live tree. */
  stats(): { paths: number; iterations: number; bytes: number } {
    const live = this.#statement(
      "SELECT COUNT(*) AS n, COALESCE(SUM(i.size), 0) AS b FROM paths p JOIN iterations i ON i.sequence = p.sequence WHERE p.deleted = 0",
    ).get()!;
    const all = this.#statement("SELECT COUNT(*) AS n FROM iterations").get()!;
    return {
      paths: columns(live).integer("n"),
      iterations: columns(all).integer("n"),
      bytes: columns(live).integer("b"),
    };
  }

  /** A small stored fact, or `undefined`. */
  getMeta(key: string): string | undefined {
    const row = this.#statement("SELECT value FROM meta WHERE key = ?").get(key);
    return row ? columns(row).text("value") : undefined;
  }

  /** Stores a small fact. */
  setMeta(key: string, value: string): void {
    this.#statement(
      "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    ).run(key, value);
  }

  /** Calls `listener` after every commit that recorded iterations; returns an unsubscribe. */
  onRecorded(listener: RecordListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The file states the scanner remembers at or beneath `dir` (all of them for `""`), by path. */
  fileStates(dir = ""): Map<string, FileState> {
    const [where, args] = underFolder("path", dir);
    const rows = this.#statement(
      `SELECT ${F_COLUMNS} FROM file_state f WHERE ${where}`,
    ).all(...args).map(toFileState);
    return new Map(rows.map((row) => [row.path, row]));
  }

  /**
   * A page of the live paths, sorted by path: the first `limit` after `after` (from the
   * first with `null`), each with its latest iteration's content hash and mode, and what
   * the scanner last saw of it (`null` when nothing). A scan of a large tree compares with
   * them a page at a time, never holding every record at once. Each page is a query of its
   * own, so a caller may wait between pages (a scan walking the disk meanwhile) while the
   * store is written.
   *
   * @param after The last path of the page before, or `null`.
   * @param limit How many at most.
   * @returns The page; shorter than `limit` only at the end.
   */
  liveStatesAfter(after: string | null, limit: number): LiveState[] {
    const rows = this.#statement(
      `SELECT ${LIVE_COLUMNS} FROM paths p JOIN iterations i ON i.sequence = p.sequence
       LEFT JOIN file_state f ON f.path = p.path
       WHERE p.deleted = 0 AND p.path > ? ORDER BY p.path LIMIT ?`,
    ).all(after ?? "", limit);
    // "" sorts before every path, and no path is "".
    return rows.map(toLiveState);
  }

  /** The file states the scanner remembers for exactly these paths, by path: one query. */
  fileStatesOf(paths: string[]): Map<string, FileState> {
    if (paths.length === 0) return new Map();
    const rows = this.#statement(
      `SELECT ${F_COLUMNS} FROM json_each(?) j JOIN file_state f ON f.path = j.value`,
    ).all(JSON.stringify(paths)).map(toFileState);
    return new Map(rows.map((row) => [row.path, row]));
  }

  /**
   * Which of `paths` have live paths recorded beneath them, as if they were folders: a
   * path written as a file must then also record those as deleted. One query for all.
   */
  withLiveInside(paths: string[]): Set<string> {
    if (paths.length === 0) return new Set();
    const rows = this.#statement(
      `SELECT j.value AS path FROM json_each(?) j WHERE EXISTS (
         SELECT 1 FROM paths p
         WHERE p.deleted = 0 AND p.path >= j.value || '/' AND p.path < j.value || '0')`,
    ).all(JSON.stringify(paths));
    return new Set(rows.map((row) => columns(row).text("path")));
  }

  /** Remembers what the scanner saw of these paths, or forgets it (`{ path, forget: true }`). */
  saveFileStates(states: FileStateChange[]): void {
    if (states.length === 0) return;
    const upsert = this.#statement(
      "INSERT INTO file_state (path, size, mtime_ms, ino, mode, hash) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (path) DO UPDATE SET size = excluded.size, mtime_ms = excluded.mtime_ms, ino = excluded.ino, mode = excluded.mode, hash = excluded.hash",
    );
    const remove = this.#statement("DELETE FROM file_state WHERE path = ?");
    inTransaction(this.db, () => {
      for (const state of states) {
        if ("forget" in state) remove.run(state.path);
        else upsert.run(state.path, state.size, state.mtimeMs, state.ino, state.mode, state.hash);
      }
    });
  }

  #one(sql: string, ...args: SQLInputValue[]): Iteration | undefined {
    const row = this.#statement(sql).get(...args);
    return row ? iterationFromRow(row) : undefined;
  }

  #all(sql: string, ...args: SQLInputValue[]): Iteration[] {
    return this.#statement(sql).all(...args).map(iterationFromRow);
  }
}

/**
 * A condition selecting `column` equal to `dir` or beneath it, as a range the path index
 * can answer ('0' is the character after '/', so `dir/` ≤ path < `dir0` is everything
 * beneath). `""` selects everything.
 */
function underFolder(column: string, dir: string): [string, SQLInputValue[]] {
  if (dir === "") return ["1 = 1", []];
  return [`(${column} = ? OR (${column} >= ? AND ${column} < ?))`, [dir, `${dir}/`, `${dir}0`]];
}
