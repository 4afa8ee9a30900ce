import type { HashCollector, Iteration } from "../store/mod.ts";

/** The action types that change files and so are snapshotted before they run. */
export const SNAPSHOT_ACTION_TYPES = [
  "write_file",
  "delete_file",
  "move_file",
  "copy_file",
  "create_dir",
  "delete_dir",
  "move_dir",
] as const;

/** An action type that is snapshotted before it runs. */
export type SnapshotActionType = typeof SNAPSHOT_ACTION_TYPES[number];

/**
 * An action an agent is about to run, e.g. `{ type: "write_file", payload: { path: "a.ts" } }`.
 * `move_*` and `copy_file` take `source` (or `path`) and `destination`; the others `path`.
 * Any other type (reads included) is never snapshotted.
 */
export interface Action {
  /** The action type, e.g. `"write_file"` or `"read_file"`. */
  type: string;
  /** The action's arguments; only the path fields are read. */
  payload?: Record<string, unknown>;
}

/** What a captured path was: a regular file, a symbolic link (content = target) or a folder. */
export type FileKind = "file" | "symlink" | "dir";

/** Whether a captured path existed when it was captured. */
export type FileStateName = "present" | "absent";

/**
 * One path as a snapshot captured it. A `dir` entry means the folder and every entry beneath
 * it were captured: a path beneath it that the snapshot does not list did not exist.
 * An `absent` entry means nothing existed at the path (rolling back removes what is there).
 */
export interface CapturedFile {
  /** Normalized workspace-relative path. */
  path: string;
  /** Whether the path existed when captured. */
  state: FileStateName;
  /** File, symlink or folder. */
  kind: FileKind;
  /** SHA-256 of the content (a link's target for a symlink); `""` for folders and absent paths. */
  hash: string;
  /** Byte count of the content; 0 for folders and absent paths. */
  size: number;
  /** Full POSIX `st_mode` including type bits (e.g. `0o100644`); 0 for absent paths. */
  mode: number;
}

/** One snapshot: what an action was about to change, as it was, linked into the hash chain. */
export interface SnapshotRecord {
  /** UUID v4. */
  id: string;
  /** Position in the chain, from 1, one more than the previous snapshot's. */
  number: number;
  /** Epoch milliseconds when it was recorded. */
  timestamp: number;
  /** The action type that triggered it (`rollback`, `rollback_transaction`, `restore` for Chronicle's own). */
  actionType: string;
  /** A one-line description, e.g. `"move_file: a.txt -> b.txt"`. */
  summary: string;
  /** The transaction it belongs to, or `null`. */
  transactionId: string | null;
  /** Captured paths, sorted by path (UTF-8 byte order). */
  files: CapturedFile[];
  /** The previous snapshot's hash (`""` for the first snapshot ever). */
  previousHash: string;
  /** SHA-256 (lowercase hex) of this snapshot's canonical encoding. */
  hash: string;
}

/** How a path differs between a snapshot and now. */
export type ChangeType = "created" | "modified" | "deleted";

/** One difference between a snapshot and the current workspace. */
export interface FileChange {
  /** Normalized workspace-relative path. */
  path: string;
  /** Added, modified or deleted since the snapshot. */
  change: ChangeType;
  /** The kind now, or before for a deletion. */
  kind: FileKind;
  /** Content hash in the snapshot; `null` when the path did not exist then. */
  beforeHash: string | null;
  /** Content hash now; `null` when the path does not exist now. */
  afterHash: string | null;
  /** Size in the snapshot; `null` when the path did not exist then. */
  beforeSize: number | null;
  /** Size now; `null` when the path does not exist now. */
  afterSize: number | null;
  /** Mode in the snapshot; `null` when the path did not exist then. */
  beforeMode: number | null;
  /** Mode now; `null` when the path does not exist now. */
  afterMode: number | null;
}

/** The changes between a snapshot and the current workspace. */
export interface SnapshotDiff {
  /** The snapshot compared with the workspace. */
  snapshotId: string;
  /** Epoch milliseconds when the diff was computed. */
  computedAt: number;
  /** Sorted by path. */
  changes: FileChange[];
}

/** Where a transaction stands. */
export type TransactionStatus = "active" | "committed" | "rolled_back";

/** A group of snapshots committed or rolled back as one. */
export interface Transaction {
  /** UUID v4. */
  id: string;
  /** Open, committed or rolled back. */
  status: TransactionStatus;
  /** Epoch milliseconds. */
  startedAt: number;
  /** Epoch milliseconds when committed or rolled back; `null` while active. */
  finishedAt: number | null;
  /** IDs of its snapshots still retained, oldest first. */
  snapshots: string[];
}

/** Retention limits; a snapshot is pruned when it exceeds either. */
export interface SnapshotConfig {
  /** Most snapshots kept. @default {100} */
  maxSnapshots: number;
  /** Oldest snapshot kept, in days. @default {30} */
  maxAgeDays: number;
}

/** One step that changes the workspace, decided by {@linkcode planRollback}. */
export type ApplyStep =
  | { op: "remove"; path: string; kind: FileKind }
  | { op: "mkdir"; path: string }
  | {
    op: "write";
    path: string;
    kind: "file" | "symlink";
    hash: string;
    size: number;
    mode: number;
  }
  | { op: "chmod"; path: string; mode: number };

/** A path an executor could not change, and why. */
export interface ApplyProblem {
  /** The path that could not be changed. */
  path: string;
  /** Why, for a person. */
  message: string;
}

/** What applying steps did. */
export interface ApplyResult {
  /** The steps carried out, in order. */
  applied: ApplyStep[];
  /** The steps that failed; the others were still attempted. */
  problems: ApplyProblem[];
}

/** What a rollback did. */
export interface RollbackResult extends ApplyResult {
  /** The snapshot of the state just before the rollback (undo it to undo the rollback); `null` off the record. */
  snapshot: SnapshotRecord | null;
}

/** One path a point-in-time restore changes. */
export interface RestoreChange {
  /** Normalized workspace-relative path. */
  path: string;
  /** `write` brings the old content back; `remove` deletes a path that did not exist then. */
  action: "write" | "remove";
  /** The path's latest iteration now, `null` when it does not exist now. */
  before: Pick<Iteration, "hash" | "size" | "mode"> | null;
  /** The iteration to bring back, `null` for a removal. */
  after: Pick<Iteration, "hash" | "size" | "mode"> | null;
}

/** What a point-in-time restore will do (or did). */
export interface RestorePlan {
  /** The store sequence the workspace goes back to. */
  sequence: number;
  /** Sorted by path. */
  changes: RestoreChange[];
}

/**
 * How rollback and restore change files so that each change is recorded once; the
 * workspace's write-through API (`Workspace` in `lib/workspace`) implements it, and so does
 * {@linkcode DiskWriter} when no workspace is running in-process.
 */
export interface WorkspaceWriter {
  /** Writes content already in the CAS to `path` atomically with the full `mode` (a link when S_IFLNK). */
  writeContent(
    path: string,
    hash: string,
    mode: number,
    options?: { origin?: string },
  ): Promise<Iteration | undefined>;
  /** Writes bytes to `path` atomically. */
  writeBytes(
    path: string,
    bytes: Uint8Array,
    options?: { mode?: number; origin?: string },
  ): Promise<Iteration | undefined>;
  /** Removes a file or link (a folder with what it holds). */
  remove(path: string, options?: { origin?: string }): Promise<Iteration | undefined>;
  /** Moves a file, link or folder. */
  move(from: string, to: string, options?: { origin?: string }): Promise<Iteration[]>;
}

/** Something that references content, e.g. the iteration `Store`. */
export interface ContentOwner {
  /** Adds every content hash it references to `hashes`. */
  addHashesTo(hashes: HashCollector): unknown;
}
