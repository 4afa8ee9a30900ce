import type { Iteration } from "../store/mod.ts";
import type { DiskStamp } from "../disk/mod.ts";
import type { CheckedFolders, DiskHooks } from "./workspace_disk.ts";
import type { LayoutOptions } from "./layout.ts";

/** Options for {@linkcode Workspace.open}. */
export interface WorkspaceOptions extends LayoutOptions {
  /** Gitignore-style patterns never recorded (besides `.git/`, the data folder, `.chronicleignore`). */
  ignore?: string[];
  /** Extra patterns for master → replica only. */
  ignoreToReplica?: string[];
  /** Extra patterns for replica → master only. */
  ignoreToMaster?: string[];
  /** Origin of changes found on disk. @default {"local"} */
  origin?: string;
  /** Hooks that change the disk underneath the executor, for tests. @default {{}} */
  hooks?: DiskHooks;
}

/** Options of a write-through change. */
export interface WriteOptions {
  /** Who made the change. @default {the workspace's origin} */
  origin?: string;
}

/** Options for {@linkcode Workspace.move}. */
export interface MoveOptions extends WriteOptions {
  /** The file or link the caller saw at the source: moved only if still there. @default {undefined} */
  sourceUnchangedSince?: DiskStamp;
  /**
   * The file or link the caller saw at the target (`null`: nothing), replaced only if
   * still there. @default {undefined}
   */
  targetUnchangedSince?: DiskStamp | null;
}

/** Options for {@linkcode Workspace.applyChanges}. */
export interface ApplyChangesOptions extends WriteOptions {
  /**
   * Rename each file into place before its fsync (both before recording): visible
   * sooner, but a power cut can leave a file torn. For a replica, whose files are copies
   * of the master's and whose torn files would be refused as conflicting write-backs. A
   * batch of 32 such copies or more is flushed by one flush of the file system.
   * @default {false}
   */
  visibleFirst?: boolean;
  /**
   * Record with `origin` only what these changes made. For writers whose origin is not
   * the local user's (a replica applying the master's versions, the master applying a
   * sandbox's): recorded with that origin, a local change would never be written back,
   * or be taken for the sandbox's. What someone else changed right after a change was
   * made and before it is recorded came after it: what lands where a change removed a
   * path, or a folder's mode changed after the change set it, is recorded with the
   * workspace's own origin, after the change itself (with `origin`). A path otherwise
   * changed since (a link replaced, a folder made then removed) fails with
   * `ChangedOnDiskError` and is not recorded, for the next look to record it as theirs.
   * @default {false}
   */
  onlyOwnChanges?: boolean;
  /**
   * Record the changes in the order given (the order their maker made them in: a
   * sandbox's write-backs), each after the folders made for it, instead of deletions
   * first, then by depth and path.
   * @default {false}
   */
  inGivenOrder?: boolean;
  /**
   * For a batch made in several calls (a replica's: the folders a level at a time, then
   * what they hold): the folders the earlier calls found to be folders, not links, or
   * made, each with its device. Not looked at again as parents; this call adds those it
   * finds or makes, and drops any it finds changed since. One map for one batch only:
   * a check is trusted no longer (see `WorkspaceDisk.checkParents`).
   * @default {a new map for this call}
   */
  checkedFolders?: CheckedFolders;
  /**
   * Whether the `bytes` given with changes are stored in the CAS once written. Not for
   * copies of content held elsewhere, read through the CAS's tier when needed (a sandbox
   * replica writing the master's versions: see `ReplicaCoreOptions.keepMasterContent`).
   * The bytes are checked against the hash either way.
   * @default {true}
   */
  keepGivenContent?: boolean;
}

/** One change for {@linkcode Workspace.applyChanges}. */
export type WorkspaceChange =
  /**
   * Content written to `path` with `mode` (`st_mode`, or permission bits for a file):
   * already in the CAS, or given as `bytes` (checked against `hash`, and stored). With
   * `createOnly`, it is only created: anything found at `path` (but an empty folder, for a
   * regular file) fails the change with `Deno.errors.AlreadyExists` and is left as it is.
   * A mode with the folder type bits makes a folder (PROTOCOL.md §8): created if missing
   * (replacing a file or link there, unless `createOnly`), its permission bits set.
   * With `unchangedSince`, a file or link is replaced only if the path still has that
   * stamp (see {@linkcode DiskStamp}) right before the rename that replaces it; else the
   * change fails with `ChangedOnDiskError` and what is there is left as it is.
   */
  | {
    path: string;
    hash: string;
    mode: number;
    bytes?: Uint8Array;
    createOnly?: boolean;
    unchangedSince?: DiskStamp;
  }
  /**
   * `path` removed: a file, a link, or a folder with everything in it. With
   * `onlyEmptyFolder`, a folder is removed only when empty; one still holding anything
   * fails the change with {@linkcode FolderNotEmptyError} and is left as it is. With
   * `unchangedSince`, a file or link is removed only if it still has that stamp.
   */
  | { path: string; remove: true; onlyEmptyFolder?: boolean; unchangedSince?: DiskStamp };

/** A folder to remove (`onlyEmptyFolder`) still holds something, so it was kept. */
export class FolderNotEmptyError extends Error {
  /** The folder's workspace path. */
  readonly path: string;
  /**
   * Makes the error.
   *
   * @param path The folder's workspace path.
   */
  constructor(path: string) {
    super(`Folder "${path}" still holds files, so it was kept`);
    this.name = "FolderNotEmptyError";
    this.path = path;
  }
}

/** What {@linkcode Workspace.applyChanges} did. */
export interface ApplyChangesResult {
  /** The iterations recorded, in path order. */
  recorded: Iteration[];
  /** Changes not made, each with its error; every other change was made and recorded. */
  failed: Array<{ path: string; error: unknown }>;
}

/** What a capture (scan or watcher batch) recorded. */
export interface CaptureResult {
  /** The iterations recorded, in path order. */
  recorded: Iteration[];
  /** Paths that could not be recorded, each with its reason. */
  problems: Array<{ path: string; reason: string }>;
}

/** Options for {@linkcode Workspace.scan}. */
export interface ScanOptions {
  /**
   * Return every iteration recorded in `recorded`. Without it `recorded` stays empty and
   * only `recordedCount` tells how many: a first scan of 100,000 files then holds none of
   * their records until it ends.
   * @default {true}
   */
  keepRecorded?: boolean;
}

/** What {@linkcode Workspace.scan} did. */
export interface ScanResult extends CaptureResult {
  /** How many iterations it recorded (kept in `recorded` or not). */
  recordedCount: number;
}

/** Options for {@linkcode Workspace.watch}. */
export interface WatchOptions {
  /** Quiet time before a batch of changes is recorded. @default {50} */
  debounceMs?: number;
  /**
   * Record a file as soon as its writer closes it, without waiting for the quiet time;
   * other events then wait at least 100 ms. Off for editors that save in several steps
   * (local-sync). @default {true}
   */
  captureOnClose?: boolean;
  /**
   * Least time between safety rescans, which catch events the OS dropped without saying
   * so (a burst past the inotify queue, files created in a folder before its watch). The
   * interval grows to thirty times the last scan's duration, so a large workspace is not
   * rescanned continuously (about 3% of a core while idle). @default {10000}
   */
  rescanMs?: number;
  /**
   * Scan at once (in slices) for what changed before the watches existed. Off when the
   * caller starts the watches first and scans right after: one walk of the tree at start,
   * not two. @default {true}
   */
  scanAtStart?: boolean;
  /**
   * Events the watch thread hands over and the workspace has not handled yet, at most:
   * past it, they are dropped (a main thread stuck that long has lost track anyway), and a
   * scan finds what they said. @default {50000}
   */
  eventBacklog?: number;
}

/**
 * The workspace's folder, or its data folder, was removed while Chronicle ran: nothing is
 * recorded (see `Workspace.gone`).
 */
export class WorkspaceGoneError extends Error {
  /**
   * Makes the error.
   *
   * @param what What is no longer there (see `Workspace.gone`).
   */
  constructor(what: string) {
    super(`${what}: nothing more is recorded`);
    this.name = "WorkspaceGoneError";
  }
}
