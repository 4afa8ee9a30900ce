/**
 * SQLite access shared by every component: opening in WAL mode, per-component
 * migrations, and write transactions.
 *
 * @module
 */
export { DatabaseError, openDatabase, type OpenDatabaseOptions } from "./open_database.ts";
export { migrate, type Migration } from "./migrate.ts";
export { inTransaction } from "./transaction.ts";
export { statementCache } from "./statement_cache.ts";
export { columns, type Row, type RowReader } from "./row.ts";
