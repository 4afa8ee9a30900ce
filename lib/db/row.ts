import type { SQLOutputValue } from "node:sqlite";
import { DatabaseError } from "./open_database.ts";

/** One row as `node:sqlite` returns it: column name to value. */
export type Row = Record<string, SQLOutputValue>;

/**
 * Reads a row's columns with their types checked, so a database written by something
 * else (or damaged) fails with the column's name instead of flowing on as a wrong type.
 *
 * @example
 * ```ts
 * import { DatabaseSync } from "node:sqlite";
 * import { columns } from "./row.ts";
 *
 * const db = new DatabaseSync(":memory:");
 * const row = db.prepare("SELECT 'a.txt' AS path, 3 AS size, NULL AS note").get()!;
 * const read = columns(row);
 * console.assert(read.text("path") === "a.txt" && read.integer("size") === 3);
 * console.assert(read.textOrNull("note") === null);
 * ```
 */
export interface RowReader {
  /** A `TEXT` column. @throws {DatabaseError} When it holds anything else. */
  text(column: string): string;
  /** A `TEXT` column that may be `NULL`. @throws {DatabaseError} When it holds anything else. */
  textOrNull(column: string): string | null;
  /** An `INTEGER` column, as a safe integer. @throws {DatabaseError} When it holds anything else. */
  integer(column: string): number;
  /** An `INTEGER` column that may be `NULL`. @throws {DatabaseError} When it holds anything else. */
  integerOrNull(column: string): number | null;
  /** A number column (`INTEGER` or `REAL`). @throws {DatabaseError} When it holds anything else. */
  number(column: string): number;
  /** A flag stored as `0` or `1`. @throws {DatabaseError} When it holds anything else. */
  boolean(column: string): boolean;
  /** A `BLOB` column. @throws {DatabaseError} When it holds anything else. */
  bytes(column: string): Uint8Array;
  /**
   * A `TEXT` column that holds one of `allowed`.
   *
   * @throws {DatabaseError} When it holds anything else.
   */
  choice<T extends string>(column: string, allowed: readonly T[]): T;
}

/**
 * A typed reader over `row`.
 *
 * @param row A row from `StatementSync.get()` or `.all()`.
 * @returns Accessors that check each column's type.
 */
export function columns(row: Row): RowReader {
  return new CheckedRow(row);
}

/**
 * {@linkcode columns}' reader: one small object per row, its methods shared (a scan reads
 * rows by the hundred thousand).
 */
class CheckedRow implements RowReader {
  readonly #row: Row;

  constructor(row: Row) {
    this.#row = row;
  }

  text(column: string): string {
    return this.textOrNull(column) ?? nonNull(column);
  }

  textOrNull(column: string): string | null {
    const value = this.#row[column];
    if (value === null || typeof value === "string") return value;
    throw this.#wrong(column, "text");
  }

  integer(column: string): number {
    return this.integerOrNull(column) ?? nonNull(column);
  }

  integerOrNull(column: string): number | null {
    const value = this.#row[column];
    if (value === null) return null;
    if (typeof value === "number" && Number.isSafeInteger(value)) return value;
    if (typeof value === "bigint" && value <= MAX_SAFE && value >= MIN_SAFE) return Number(value);
    throw this.#wrong(column, "an integer");
  }

  number(column: string): number {
    const value = this.#row[column];
    if (typeof value === "number") return value;
    return this.integer(column);
  }

  boolean(column: string): boolean {
    const value = this.integerOrNull(column);
    if (value === 0 || value === 1) return value === 1;
    throw this.#wrong(column, "0 or 1");
  }

  bytes(column: string): Uint8Array {
    const value = this.#row[column];
    if (value instanceof Uint8Array) return value;
    throw this.#wrong(column, "bytes");
  }

  choice<T extends string>(column: string, allowed: readonly T[]): T {
    const value = this.#row[column];
    if (allowed.includes(value as T)) return value as T;
    throw this.#wrong(column, `one of ${allowed.map((a) => `"${a}"`).join(", ")}`);
  }

  #wrong(column: string, expected: string): DatabaseError {
    return new DatabaseError(
      `Column "${column}" holds ${describe(this.#row[column])} where ${expected} was expected: ` +
        "the database was changed outside Chronicle or is damaged",
    );
  }
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);

function nonNull(column: string): never {
  throw new DatabaseError(
    `Column "${column}" is NULL where a value was expected: ` +
      "the database was changed outside Chronicle or is damaged",
  );
}

function describe(value: SQLOutputValue | undefined): string {
  if (value === undefined) return "nothing (no such column)";
  if (value === null) return "NULL";
  if (value instanceof Uint8Array) return `${value.length} bytes`;
  return `${typeof value} ${JSON.stringify(String(value)).slice(0, 40)}`;
}
