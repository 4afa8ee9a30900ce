import type { DatabaseSync, StatementSync } from "node:sqlite";
import { columns, statementCache } from "../db/mod.ts";
import type { MasterVersion } from "./replica_paths.ts";

/** A master version about to be written to (or removed from) `path`. */
export interface IntendedWrite {
  /** Normalized workspace-relative path. */
  path: string;
  /** The master version that will be there. */
  version: MasterVersion;
}

type StoredVersion = [path: string, sequence: number, hash: string, mode: number];

/**
 * The master versions a replica is writing to disk and has not recorded yet (table
 * `replica_applying`, one row per batch). A replica killed between writing a file and
 * recording it finds the file on disk, unrecorded, when it starts again: its capture
 * would take the master's own content for a local change, send it back, and have it
 * rejected as a conflict. A file found with the content and mode noted here is the
 * master's version instead ({@linkcode ApplyIntents.match}).
 *
 * Rows are committed before the batch's first file is written and removed once the batch
 * is recorded; a version never recorded stays until a later version of its path is
 * applied ({@linkcode ApplyIntents.dropSuperseded}). Removals are noted as well (content
 * `""`, mode 0): a file removed and not recorded as such is found missing.
 */
export class ApplyIntents {
  readonly #statement: (sql: string) => StatementSync;
  /** Every noted version by path, with its batch's row id. */
  readonly #byPath = new Map<string, MasterVersion & { batch: number }>();

  /**
   * Opens the notes on the replica's database, reading what a crash left.
   *
   * @param db The replica's database, already migrated.
   */
  constructor(db: DatabaseSync) {
    this.#statement = statementCache(db);
    const rows = this.#statement("SELECT id, versions FROM replica_applying ORDER BY id")
      .all();
    for (const row of rows) {
      const versions = JSON.parse(columns(row).text("versions")) as StoredVersion[];
      for (const stored of versions) this.#note(columns(row).integer("id"), stored);
    }
  }

  /** How many versions are noted. */
  get size(): number {
    return this.#byPath.size;
  }

  /**
   * Notes versions about to be written, in one row.
   *
   * @returns The row's id, for {@linkcode ApplyIntents.end}.
   */
  begin(writes: IntendedWrite[]): number {
    return this.#insert(writes.map(({ path, version }) => toStored(path, version)));
  }

  /**
   * A batch is applied: its versions are forgotten, but those of `unrecorded` (written,
   * perhaps, and not recorded), which stay noted.
   */
  end(id: number, unrecorded: ReadonlySet<string>): void {
    const kept: StoredVersion[] = [];
    for (const [path, version] of this.#byPath) {
      if (version.batch !== id) continue;
      if (unrecorded.has(path)) kept.push(toStored(path, version));
      else this.#byPath.delete(path);
    }
    if (kept.length === 0) {
      this.#statement("DELETE FROM replica_applying WHERE id = ?").run(id);
    } else {
      this.#statement("UPDATE replica_applying SET versions = ? WHERE id = ?")
        .run(JSON.stringify(kept), id);
    }
  }

  /**
   * The master version noted for `path`, if it has exactly this content and mode (`""`
   * and 0 for a removal): what is found there is then that version, not a local change.
   * The note stays (a capture recorded again after a restart is recognized again).
   */
  match(path: string, hash: string, mode: number): MasterVersion | null {
    const noted = this.#byPath.get(path);
    if (!noted || noted.hash !== hash || noted.mode !== mode) return null;
    const { batch: _, ...version } = noted;
    return version;
  }

  /**
   * Forgets the versions whose path has had that version or a later one applied since;
   * the others stay noted, in one row.
   *
   * @param appliedSequence The master sequence applied at a path (0 when none).
   */
  dropSuperseded(appliedSequence: (path: string) => number): void {
    if (this.#byPath.size === 0) return;
    const kept: StoredVersion[] = [];
    for (const [path, version] of this.#byPath) {
      if (appliedSequence(path) < version.sequence) kept.push(toStored(path, version));
    }
    this.#statement("DELETE FROM replica_applying").run();
    this.#byPath.clear();
    if (kept.length > 0) this.#insert(kept);
  }

  /** Notes versions in a new row; returns its id. */
  #insert(versions: StoredVersion[]): number {
    const id = Number(
      this.#statement("INSERT INTO replica_applying (versions) VALUES (?)")
        .run(JSON.stringify(versions)).lastInsertRowid,
    );
    for (const version of versions) this.#note(id, version);
    return id;
  }

  #note(batch: number, [path, sequence, hash, mode]: StoredVersion): void {
    this.#byPath.set(path, { sequence, hash, mode, deleted: hash === "", batch });
  }
}

function toStored(path: string, { sequence, hash, mode }: MasterVersion): StoredVersion {
  return [path, sequence, hash, mode];
}
