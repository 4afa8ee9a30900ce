import type { DatabaseSync, StatementSync } from "node:sqlite";
import { columns, type Row, statementCache } from "../db/mod.ts";

/** A path's content as the master has it: what a notification carries. */
export interface MasterVersion {
  /** The master sequence of that version. */
  sequence: number;
  /** Content hash, `""` for a deletion. */
  hash: string;
  /** Full `st_mode`, 0 for a deletion. */
  mode: number;
  /** Whether the master deleted the path. */
  deleted: boolean;
}

/** What a replica knows of one path's master side. */
export interface ReplicaPathState {
  /** The path. */
  path: string;
  /** The master's version last applied here (`sequence` 0 when none). */
  applied: MasterVersion;
  /** The master sequence of this replica's own latest accepted write to the path, or 0. */
  acceptedSeq: number;
  /** A newer master version held back while write-backs of the path await an answer. */
  deferred: MasterVersion | null;
}

/**
 * The replica's per-path view of the master (table `replica_paths`, see `_schema.ts`):
 * which master version of each path it applied (the `master_rowid_seen` of the next local
 * write), its own accepted writes, and notifications deferred while its own write-backs
 * of the path are unanswered. Tables must be migrated first (`openReplicaTables`).
 */
export class ReplicaPaths {
  readonly #statement: (sql: string) => StatementSync;

  /**
   * Opens the table on the replica's database.
   *
   * @param db The replica's database, already migrated.
   */
  constructor(db: DatabaseSync) {
    this.#statement = statementCache(db);
  }

  /** The path's state; a path never heard of has `applied.sequence` 0 and no deferral. */
  get(path: string): ReplicaPathState {
    const row = this.#statement("SELECT * FROM replica_paths WHERE path = ?").get(path);
    return row ? toState(row) : neverHeardOf(path);
  }

  /** The states of `paths` (as {@linkcode ReplicaPaths.get} gives each), in one query. */
  getMany(paths: string[]): Map<string, ReplicaPathState> {
    const rows = this.#statement(
      "SELECT r.* FROM json_each(?) j JOIN replica_paths r ON r.path = j.value",
    ).all(JSON.stringify(paths)).map(toState);
    const found = new Map(rows.map((state) => [state.path, state]));
    return new Map(paths.map((path) => [path, found.get(path) ?? neverHeardOf(path)]));
  }

  /** The `master_rowid_seen` for a local write of `path`. */
  seen(path: string): number {
    const row = this.#statement("SELECT master_seq FROM replica_paths WHERE path = ?").get(path);
    return row ? columns(row).integer("master_seq") : 0;
  }

  /**
   * Records that the master's `version` of `path` is now applied (written, or already
   * there). A deferral at or below that sequence is dropped.
   */
  setApplied(path: string, version: MasterVersion): void {
    // Every CASE reads the row as it was: a deferral at or below the sequence is cleared.
    this.#statement(SET_APPLIED).run(
      path,
      version.sequence,
      version.hash,
      version.mode,
      version.deleted ? 1 : 0,
    );
  }

  /**
   * Holds back the master's `version` of `path` (it replaces an older deferral); not one
   * at or below the version applied, nor one below this replica's own accepted write: a
   * write-back answer read while the version was decided may have moved the path past it,
   * and such a stale deferral would stand in for the version applied when a conflict's
   * release takes the master's version back.
   */
  defer(path: string, version: MasterVersion): void {
    this.#statement(
      `INSERT INTO replica_paths (path, deferred_seq, deferred_hash, deferred_mode, deferred_deleted)
       VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (path) DO UPDATE SET deferred_seq = excluded.deferred_seq,
         deferred_hash = excluded.deferred_hash, deferred_mode = excluded.deferred_mode,
         deferred_deleted = excluded.deferred_deleted
       WHERE (deferred_seq IS NULL OR deferred_seq < excluded.deferred_seq)
         AND master_seq < excluded.deferred_seq AND accepted_seq <= excluded.deferred_seq`,
    ).run(path, version.sequence, version.hash, version.mode, version.deleted ? 1 : 0);
  }

  /**
   * Holds back the master's version applied here, to take it back once the path's
   * conflicts are released (a sandbox's rejected write): unless a later version is held
   * back already. Durable, unlike the release queued for it: a connection that ends
   * before that release runs leaves it for the next one (`deferredPaths`).
   */
  deferApplied(path: string): void {
    this.#statement(
      `INSERT INTO replica_paths (path, deferred_seq, deferred_hash, deferred_mode, deferred_deleted)
       VALUES (?, 0, '', 0, 1)
       ON CONFLICT (path) DO UPDATE SET deferred_seq = master_seq, deferred_hash = hash,
         deferred_mode = mode, deferred_deleted = deleted
       WHERE deferred_seq IS NULL`,
    ).run(path);
  }

  /** Records that the master accepted this replica's write of `path` as `sequence`. */
  setAccepted(path: string, sequence: number): void {
    this.#statement(
      `INSERT INTO replica_paths (path, accepted_seq) VALUES (?, ?)
       ON CONFLICT (path) DO UPDATE SET accepted_seq = MAX(accepted_seq, excluded.accepted_seq)`,
    ).run(path, sequence);
  }

  /**
   * Forgets the master sequences a full resync restates (PROTOCOL.md §4): this replica's
   * accepted writes and the versions held back. They may count in a replaced master's
   * numbering (its store gone, sequences start again), where an old acceptance would make
   * the new master's versions look superseded and an old deferral would never be replaced.
   * The resync's replay sends the latest version of every path again, deferred anew where
   * a write-back still waits.
   *
   * @param keepAccepted Paths whose acceptance came from the master being resynced with
   * (on the same connection): their sequences are in its numbering, and kept.
   */
  forgetMasterSequences(keepAccepted: Iterable<string> = []): void {
    this.#statement(
      `UPDATE replica_paths SET
         accepted_seq = CASE WHEN path IN (SELECT value FROM json_each(?)) THEN accepted_seq
           ELSE 0 END,
         deferred_seq = NULL, deferred_hash = NULL, deferred_mode = NULL, deferred_deleted = NULL
       WHERE accepted_seq <> 0 OR deferred_seq IS NOT NULL`,
    ).run(JSON.stringify([...keepAccepted]));
  }

  /** Paths whose write by this replica the master accepted at a sequence after `sequence`. */
  acceptedAfter(sequence: number): Set<string> {
    return new Set(
      this.#statement("SELECT path FROM replica_paths WHERE accepted_seq > ?").all(sequence)
        .map((row) => columns(row).text("path")),
    );
  }

  /**
   * The paths inside folder `path` with a deferred master version, in the order the master
   * made those versions (a folder before what it holds).
   */
  deferredInside(path: string): string[] {
    return this.#statement(
      `SELECT path FROM replica_paths WHERE path >= ? || '/' AND path < ? || '0'
         AND deferred_seq IS NOT NULL ORDER BY deferred_seq`,
    ).all(path, path).map((row) => columns(row).text("path"));
  }

  /** Paths with a deferred master version. */
  deferredPaths(): string[] {
    return this.#statement("SELECT path FROM replica_paths WHERE deferred_seq IS NOT NULL")
      .all().map((row) => columns(row).text("path"));
  }
}

/** A deferral column's value once `excluded.master_seq` is applied: kept only if later. */
const KEEP_LATER_DEFERRAL = (column: string) =>
  `CASE WHEN deferred_seq <= excluded.master_seq THEN NULL ELSE ${column} END`;

/** `setApplied`'s statement: made once (it runs for every version a replica applies). */
const SET_APPLIED =
  `INSERT INTO replica_paths (path, master_seq, hash, mode, deleted) VALUES (?, ?, ?, ?, ?)
   ON CONFLICT (path) DO UPDATE SET master_seq = excluded.master_seq, hash = excluded.hash,
     mode = excluded.mode, deleted = excluded.deleted,
     deferred_seq = ${KEEP_LATER_DEFERRAL("deferred_seq")},
     deferred_hash = ${KEEP_LATER_DEFERRAL("deferred_hash")},
     deferred_mode = ${KEEP_LATER_DEFERRAL("deferred_mode")},
     deferred_deleted = ${KEEP_LATER_DEFERRAL("deferred_deleted")}`;

function neverHeardOf(path: string): ReplicaPathState {
  return {
    path,
    applied: { sequence: 0, hash: "", mode: 0, deleted: true },
    acceptedSeq: 0,
    deferred: null,
  };
}

function toState(row: Row): ReplicaPathState {
  const read = columns(row);
  const deferredSeq = read.integerOrNull("deferred_seq");
  return {
    path: read.text("path"),
    applied: {
      sequence: read.integer("master_seq"),
      hash: read.text("hash"),
      mode: read.integer("mode"),
      deleted: read.boolean("deleted"),
    },
    acceptedSeq: read.integer("accepted_seq"),
    deferred: deferredSeq === null ? null : {
      sequence: deferredSeq,
      hash: read.textOrNull("deferred_hash") ?? "",
      mode: read.integerOrNull("deferred_mode") ?? 0,
      deleted: read.integerOrNull("deferred_deleted") === 1,
    },
  };
}
