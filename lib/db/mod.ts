/**
 * SQLite access shared by every component: opening in WAL mode, per-component
 * migrations, write transactions, and WAL checkpoints off the writing thread.
 *
 * @module
 */
export { DatabaseError, openDatabase, type OpenDatabaseOptions } from "./open_database.ts";
export { migrate, type Migration } from "./migrate.ts";
export { inTransaction } from "./transaction.ts";
export {
  BackgroundCheckpointer,
  type BackgroundCheckpointerOptions,
} from "./background_checkpointer.ts";
export {
  CHECKPOINT_IDLE_MS,
  CheckpointWhileBusy,
  type CheckpointWhileBusyOptions,
} from "./checkpoint_while_busy.ts";
export { statementCache } from "./statement_cache.ts";
export { columns, type Row, type RowReader } from "./row.ts";
