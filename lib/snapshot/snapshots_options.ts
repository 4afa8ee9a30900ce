import type { DatabaseSync } from "node:sqlite";
import type { Cas } from "../cas/mod.ts";
import type { Store } from "../store/mod.ts";
import type {
  CapturedFile,
  RollbackResult,
  SnapshotConfig,
  Transaction,
  WorkspaceWriter,
} from "./types.ts";

/** Options for {@linkcode Snapshots.open}. */
export interface SnapshotsOptions {
  /** The workspace folder. */
  root: string;
  /** The content store where captured content goes (shared with the iteration store). */
  cas: Cas;
  /** The workspace's database. @default {store.db} */
  db?: DatabaseSync | undefined;
  /** The iteration store: needed for point-in-time restore, and records rollback changes. */
  store?: Store | undefined;
  /** How rollback and restore change files. @default {a DiskWriter recording into `store`} */
  writer?: WorkspaceWriter | undefined;
  /**
   * Paths the writer refuses to change (the workspace's ignore patterns): rollback changes
   * them directly on disk instead, unrecorded. @default {none}
   */
  ignores?: ((path: string) => boolean) | undefined;
  /** Chronicle's data folder, never captured. @default {`ROOT/.chronicle`} */
  dataDir?: string | undefined;
  /** Retention limits. @default {DEFAULT_SNAPSHOT_CONFIG} */
  config?: Partial<SnapshotConfig> | undefined;
  /** Off the record: take no snapshots at all (the seed's OTR mode). @default {false} */
  offTheRecord?: boolean | undefined;
  /**
   * Origin given to every rollback and restore change instead of the usual ones.
   * @default {"rollback" for a rollback, "restore" for a point-in-time restore}
   */
  origin?: string | undefined;
  /** The clock for timestamps and retention, epoch milliseconds. @default {Date.now} */
  clock?: (() => number) | undefined;
  /**
   * Fault injection for tests: called after content is captured into the CAS and before
   * the snapshot is recorded (a crash here must leave no snapshot).
   */
  afterCapture?: ((files: CapturedFile[]) => void | Promise<void>) | undefined;
}

/** Options of one {@linkcode Snapshots.snapshot} call. */
export interface SnapshotOptions {
  /** Add the snapshot to this active transaction (ID or unique prefix). */
  transactionId?: string | null | undefined;
  /** Skip this one snapshot (off the record). @default {false} */
  offTheRecord?: boolean | undefined;
}

/** Options of {@linkcode Snapshots.list}. */
export interface ListSnapshotsOptions {
  /** Only this transaction's snapshots (ID or unique prefix). */
  transactionId?: string | undefined;
  /** Only the newest this many (still listed oldest first). */
  limit?: number | undefined;
}

/** Options of {@linkcode Snapshots.rollback} and {@linkcode Snapshots.restoreTo}. */
export interface UndoOptions {
  /** Take no snapshot of the state before (the change cannot be undone then). @default {false} */
  offTheRecord?: boolean | undefined;
}

/** What a transaction rollback did. */
export interface TransactionRollbackResult extends RollbackResult {
  /** The transaction, as it stands after the rollback. */
  transaction: Transaction;
}
