/**
 * What a replica's apply pipeline (`VersionApplier`) takes at once, and what it holds of
 * each version: its batches, the versions pending and the changes to make.
 *
 * @module
 */
import { CHUNKING_THRESHOLD } from "../cas/mod.ts";
import { ancestorsOf, PathSet } from "../paths/mod.ts";
import type { DiskStamp } from "../disk/mod.ts";
import { isFolderMode, type Iteration } from "../store/mod.ts";
import type { NotificationMessage } from "../wire/mod.ts";
import type { MasterVersion } from "./replica_paths.ts";
import type { ApplyItem } from "./replica_state_types.ts";
import type { AsyncQueue } from "./transports/_async_queue.ts";

/**
 * Most notifications applied together (see `Workspace.applyChanges`): one transaction
 * records them, after flushes that overlap the writes. Inline content keeps such a batch
 * under 8 MiB.
 */
export const APPLY_BATCH = 2048;
/**
 * Takes the notifications queued right behind `first` in `queue`, for paths unrelated to each other
 * and to `first`'s, so that all of them can be applied at once; but for folders created
 * in the batch, which may hold later paths of it (they are made first, a level at a
 * time: see `VersionApplier.makeChanges`). Without that, every folder of a catch-up
 * would end a batch.
 */
export function followingNotifications(
  first: NotificationMessage,
  queue: AsyncQueue<ApplyItem>,
): NotificationMessage[] {
  const others = new PathSet(); // every path but the folders created
  const created = new Set<string>();
  const holdingCreated = new Set<string>(); // the ancestors of the folders created
  let size = 0;
  const take = (msg: NotificationMessage): boolean => {
    const path = msg.filepath;
    if (others.overlaps(path) || created.has(path) || holdingCreated.has(path)) return false;
    if (!msg.is_deletion && isFolderMode(Number(msg.permissions))) {
      created.add(path);
      for (const ancestor of ancestorsOf(path)) holdingCreated.add(ancestor);
    } else others.add(path);
    size++;
    return true;
  };
  take(first);
  return queue.takeWhile((item): item is NotificationMessage =>
    item.type === "Notification" && size < APPLY_BATCH && take(item)
  );
}

/** A master version of a path waiting to be applied, with its inline content if any. */
export interface PendingVersion {
  /** The path. */
  path: string;
  /** The master's version of it. */
  version: MasterVersion;
  /** Its content, when the notification carried it. */
  inline: Uint8Array | null;
  /** Its content's size, when known (from its notification). */
  size?: number;
}

/**
 * A version to write or remove on disk; `createOnly` writes refuse anything found there;
 * with `unchangedSince`, the file or link checked there is replaced or removed only if it
 * still has that stamp at the last moment; `local`, what the store recorded there when
 * the version was decided.
 */
export type ChangeToMake = PendingVersion & {
  action: "write" | "remove";
  createOnly?: boolean;
  unchangedSince?: DiskStamp;
  local?: Iteration | undefined;
};

/** What {@linkcode VersionApplier.makeChanges} did with a batch. */
export interface MadeChanges {
  /** How many changes were made. */
  made: number;
  /** Create-only writes that found something on disk (left as it is, to weigh again). */
  taken: ChangeToMake[];
  /** Writes whose inline content did not match its hash (nothing written: to fetch). */
  corrupt: ChangeToMake[];
}

/**
 * Whether content of this size is fetched into memory to be written, instead of into the
 * CAS: by a replica keeping no copy of the master's content (see
 * `ReplicaCoreOptions.keepMasterContent`), under the chunking threshold (larger content
 * comes as chunks, assembled in the CAS).
 */
export function fetchesIntoMemory(size: number, keepsMasterContent: boolean): boolean {
  return !keepsMasterContent && size < CHUNKING_THRESHOLD;
}

/**
 * The bytes a version's content takes in memory when written (see `VersionContent`): a
 * file's content that did not come inline, of a known size, fetched into memory
 * ({@linkcode fetchesIntoMemory}); 0 for anything else.
 */
export function fetchedIntoMemory(
  item: PendingVersion & { action?: string },
  keepsMasterContent: boolean,
): number {
  const { version, inline, size } = item;
  if (item.action === "remove" || version.deleted || inline !== null || size === undefined) {
    return 0;
  }
  if (isFolderMode(version.mode) || !fetchesIntoMemory(size, keepsMasterContent)) return 0;
  return Math.max(size, 1);
}
