import { assertBytesHash, type Cas, type PreparedFile } from "../cas/mod.ts";
import { forEachLimited } from "../concurrency/mod.ts";
import {
  canSyncFileSystem,
  ChangedOnDiskError,
  expectStamp,
  isMissing,
  lstatOrNullSync,
  syncDir,
} from "../disk/mod.ts";
import { parentOf, PathError, PathSet } from "../paths/mod.ts";
import { isFolderMode, S_IFLNK, S_IFMT, S_IFREG } from "../store/mod.ts";
import { type Observation, observe } from "./file_observation.ts";
import {
  type Chunk,
  type FileChange,
  isFolderInTheWay,
  observeFile,
  type SinceMade,
  sinceMade,
  syncFileSystems,
  UNPLACED,
  untilSettled,
  type WriteFlags,
} from "./_change_steps.ts";
import { type SeenFile, settledWhenPlaced } from "./plan_capture.ts";
import type { WrittenFile } from "./_recorder.ts";
import type { CheckedFolders, WorkspaceDisk } from "./workspace_disk.ts";
import {
  type ApplyChangesOptions,
  type ApplyChangesResult,
  type CaptureResult,
  FolderNotEmptyError,
  type WorkspaceChange,
} from "./workspace_types.ts";

/**
 * How many changes {@linkcode Workspace.applyChanges} makes at once: each fsynced one
 * waits mostly on its fsync, and the file system commits concurrent ones together.
 */
const APPLY_CONCURRENCY = 16;
/**
 * A batch of at least this many copies (`visibleFirst`) is flushed by one flush of the
 * file system (see `syncFileSystem` in lib/disk) rather than an fsync per file, where
 * that works.
 */
const FILE_SYSTEM_SYNC_MIN = 32;

/**
 * Changes of one batch written before their flush starts: a large batch is flushed in
 * chunks of this many, each while the next is written.
 */
const FLUSH_CHUNK = 512;

/** What a {@linkcode ChangeWriter} works with. */
export interface ChangeWriterContext {
  root: string;
  cas: Cas;
  /** The workspace's one disk executor. */
  disk: WorkspaceDisk;
  /** Whether files are written through the CAS's tmp folder (see `WriteToOptions.tempInStore`). */
  tempInStore: boolean;
  /** Normalizes and checks a path (see `Workspace.checkPath`). */
  checkPath: (path: string) => string;
  /** Records what is on disk at these paths now (the workspace's capture). */
  capture: (
    paths: string[],
    options: {
      origin?: string | undefined;
      written?: Map<string, WrittenFile>;
      /** Folders looked at alone, not with what they hold (see `Recorder.capture`). */
      shallow?: ReadonlySet<string>;
      /** What the writer's last look found at some of them (see `Recorder.capture`). */
      lookedAt?: ReadonlyMap<string, Observation>;
      /** Paths removed: what is found there is someone else's (see `Recorder.capture`). */
      removed?: ReadonlySet<string>;
      /** Folders given a mode someone changed since (see `Recorder.capture`). */
      overtaken?: ReadonlyMap<string, number>;
      /** The order the changes were made in (see `Recorder.capture`). */
      order?: readonly string[] | undefined;
    },
  ) => Promise<CaptureResult>;
}

/**
 * The write path of a workspace: makes batches of changes on disk through the
 * workspace's executor, durable before they are recorded, then records them. Internal to
 * `Workspace`, which runs it in its queue.
 */
export class ChangeWriter {
  readonly #c: ChangeWriterContext;

  /**
   * Makes the writer.
   *
   * @param context What it works with.
   */
  constructor(context: ChangeWriterContext) {
    this.#c = context;
  }

  /**
   * Makes and records the changes (see `Workspace.applyChanges`).
   *
   * @param pathsChecked Whether every change's path is already normalized and checked by
   * the caller (a single write that needed it first), so it is not checked again.
   */
  async applyChanges(
    changes: WorkspaceChange[],
    options: ApplyChangesOptions,
    pathsChecked = false,
  ): Promise<ApplyChangesResult> {
    const failed: ApplyChangesResult["failed"] = [];
    const accepted: WorkspaceChange[] = [];
    const taken = new PathSet();
    for (const change of changes) {
      let path: string;
      try {
        path = pathsChecked ? change.path : this.#c.checkPath(change.path);
      } catch (error) {
        failed.push({ path: change.path, error });
        continue;
      }
      if (taken.overlaps(path)) {
        throw new TypeError(`"${path}" is related to another path of the same batch of changes`);
      }
      taken.add(path);
      accepted.push({ ...change, path });
    }
    // Folders found (or made) folders by this batch: each looked at once (see makeFolder),
    // its device noted then for the flush.
    const parents: CheckedFolders = options.checkedFolders ?? new Map();
    let made: WorkspaceChange[] = [];
    const written = new Map<string, WrittenFile>();
    const visibleFirst = options.visibleFirst ?? false;
    // Only copies, visible before they are durable anyway, skip their own fsync for one
    // flush of the file system: an original is renamed into place only once it is durable.
    const flushAtOnce = visibleFirst && accepted.length >= FILE_SYSTEM_SYNC_MIN &&
      canSyncFileSystem();
    const write = {
      visibleFirst,
      syncFile: !flushAtOnce,
      keepGivenContent: options.keepGivenContent ?? true,
    };
    // A large batch of copies puts each chunk's files in place only once the next chunk is
    // written (the last one, once SETTLE_MS passed): by then the clock has moved past their
    // modification times, so their records are trusted at once (settledWhenPlaced), and
    // the scan after a catch-up does not read every file it wrote again.
    const placeLater = visibleFirst && accepted.length >= FILE_SYSTEM_SYNC_MIN;
    // Each chunk is flushed while the next is written: only the last flush is waited for
    // with nothing else to do. Every flush starts once its chunk's changes are all made.
    const flushes: Promise<void>[] = [];
    // A change made: flushed with its chunk, recorded with what was written, if a file.
    const madeOne = async (
      chunk: Chunk,
      change: WorkspaceChange,
      file: SeenFile | null,
      settled = false,
    ) => {
      chunk.made.push(change);
      await this.#c.disk.changed(change.path);
      if (file && "hash" in change) {
        written.set(change.path, { file, hash: change.hash, seenAt: Date.now(), settled });
      }
    };
    const finish = async (chunk: Chunk) => {
      await forEachLimited(chunk.unplaced, APPLY_CONCURRENCY, async ({ change, prepared }) => {
        try {
          const placedAt = Date.now();
          const file = await this.#place(change, prepared, write);
          await madeOne(chunk, change, file, !!file && settledWhenPlaced(file.mtimeMs, placedAt));
        } catch (error) {
          failed.push({ path: change.path, error });
        }
      });
      made.push(...chunk.made);
      const flush = this.#makeDurable(chunk.made, write.syncFile, parents);
      flush.catch(() => {}); // settled below, with the others
      flushes.push(flush);
    };
    let previous: Chunk | null = null;
    for (let at = 0; at < accepted.length; at += FLUSH_CHUNK) {
      const chunk: Chunk = { made: [], unplaced: [] };
      await forEachLimited(
        accepted.slice(at, at + FLUSH_CHUNK),
        APPLY_CONCURRENCY,
        async (change) => {
          try {
            const file = await this.#makeChange(change, parents, write, placeLater && chunk);
            if (file !== UNPLACED) await madeOne(chunk, change, file);
          } catch (error) {
            failed.push({ path: change.path, error });
          }
        },
      );
      // Nothing left to place: flushed now, while the next chunk is written.
      if (!placeLater) await finish(chunk);
      else {
        if (previous) await finish(previous);
        previous = chunk;
      }
    }
    if (previous) {
      await untilSettled(previous.unplaced);
      await finish(previous);
    }
    const flushFailure = (await Promise.allSettled(flushes)).find((outcome) =>
      outcome.status === "rejected"
    );
    if (flushFailure) {
      // Made but perhaps not durable: never recorded. The disk now differs from the store,
      // as after a crash, and the next look at these paths records what is there.
      for (const change of made) failed.push({ path: change.path, error: flushFailure.reason });
      made = [];
    }
    // A path someone else changed right after our change (a link replaced, a folder
    // removed or replaced) holds their change, not ours: with `onlyOwnChanges` it is not
    // recorded with this origin (that would make it the master's on a replica, so never
    // written back) but reported, for the next look to record it as theirs. Not a
    // removal: what is put where we removed something came after the removal, which is
    // recorded, then what is there as theirs (see the capture's `removed`). Nor a folder
    // whose mode was changed after ours: ours is recorded, then theirs (`overtaken`).
    // A folder's look is also the capture's: it records what was looked at here (one
    // lstat, not two). RACE: a link or file changed between this look and the capture's
    // (microseconds) is still taken.
    const overtaken = new Map<string, number>();
    const changedSince = new Set<WorkspaceChange>();
    const looked = new Map<string, Observation>();
    for (const change of options.onlyOwnChanges ? made : []) {
      if ("remove" in change || written.has(change.path)) continue;
      const { verdict, info } = this.#sinceMade(change.path, change.mode);
      if (verdict === "overtaken") overtaken.set(change.path, change.mode);
      else if (verdict === "changed") {
        changedSince.add(change);
        parents.delete(change.path); // a folder made, now something else: looked at again
      }
      if (verdict !== "changed" && info?.isDirectory) {
        looked.set(change.path, observe(change.path, info));
      }
    }
    for (const change of changedSince) {
      failed.push({
        path: change.path,
        error: new ChangedOnDiskError(this.#absolute(change.path)),
      });
    }
    made = made.filter((change) => !changedSince.has(change));
    await this.#c.disk.recording(made.map((change) => change.path));
    // Content put with a deferred sync is made durable by #capture, before it records.
    // A write by someone else after our rename of a file is not seen here (the file is
    // recorded as written, from its handle); its own watcher event re-hashes the file,
    // because the state remembered for a fresh mtime is marked untrustworthy (see
    // stateToRemember), or, for a file placed settled, the write moved its mtime.
    const { recorded } = await this.#c.capture(made.map((change) => change.path), {
      origin: options.origin,
      written,
      order: options.inGivenOrder ? accepted.map((change) => change.path) : undefined,
      // A folder made or given its mode is that change alone: what it holds is not.
      shallow: new Set(
        made.filter((change) => "mode" in change && isFolderMode(change.mode)).map((c) => c.path),
      ),
      lookedAt: looked,
      // What is found where we removed something came after the removal, and is not ours
      // whatever its origin would be: the removal is recorded, then that as the
      // workspace's own.
      ...(options.onlyOwnChanges
        ? {
          removed: new Set(made.filter((change) => "remove" in change).map((c) => c.path)),
          overtaken,
        }
        : {}),
    });
    return { recorded, failed };
  }

  /**
   * What the disk holds now at `path`, where a change not written as a file made a folder,
   * link or file of `mode` (see applyChanges): still what it made; a folder whose mode
   * someone changed since; or something else. With the look it is told by.
   */
  #sinceMade(
    path: string,
    mode: number,
  ): { verdict: SinceMade; info: Deno.FileInfo | null } {
    const info = lstatOrNullSync(this.#absolute(path));
    return { verdict: sinceMade(info, mode), info };
  }

  /**
   * Makes changes durable before they are recorded. Files not flushed as they were written
   * are flushed by one flush of each file system the changes touched (a mount inside the
   * workspace is another one), or, where that cannot be done, one by one. Then, unless a
   * whole file system was flushed, each changed folder is flushed once.
   *
   * @param checked The batch's folders with their devices, as its writes' checks found
   * them: those are not looked at again to learn which file system holds them.
   */
  async #makeDurable(
    made: WorkspaceChange[],
    flushedAsWritten: boolean,
    checked: CheckedFolders,
  ): Promise<void> {
    if (made.length === 0) return;
    const relative = [...new Set(made.map((change) => parentOf(change.path)))];
    const folders = relative.map((folder) => this.#absolute(folder));
    if (!flushedAsWritten) {
      const devices = relative.map((folder) => checked.get(folder));
      if (await syncFileSystems(folders, devices)) return;
      await forEachLimited(made, APPLY_CONCURRENCY, (change) => this.#flushWritten(change));
    }
    await forEachLimited(folders, APPLY_CONCURRENCY, async (folder) => {
      await syncDir(folder).catch((error) => {
        if (!isMissing(error)) throw error; // RACE: removed since; nothing left to flush
      });
    });
  }

  /**
   * Flushes a file written without its fsync, found again by its path: a regular file
   * only (a link's target is never opened). RACE: a file put there since is flushed
   * instead, harmlessly.
   */
  async #flushWritten(change: WorkspaceChange): Promise<void> {
    if ("remove" in change) return;
    const absolute = this.#absolute(change.path);
    if (!lstatOrNullSync(absolute)?.isFile) return;
    await syncDir(absolute).catch((error) => {
      if (!isMissing(error)) throw error; // RACE: removed since; nothing left to flush
    });
  }

  /**
   * Writes or removes one path on disk, without recording it.
   *
   * @param later Where a regular file is left under its temp name, to be placed with its
   * chunk (see `applyChanges`), instead of placed now.
   * @returns What was written, for a regular file put where no folder was; `null` for
   * anything else, which the capture looks at on disk; {@linkcode UNPLACED} for a file left
   * in `later`.
   */
  async #makeChange(
    change: WorkspaceChange,
    parents: CheckedFolders,
    write: WriteFlags,
    later: Chunk | false = false,
  ): Promise<SeenFile | null | typeof UNPLACED> {
    const absolute = this.#absolute(change.path);
    // What the caller saw there is looked for again at the last moment, by the executor
    // (a file's right before the rename that replaces it): a write landing after the
    // caller's own look (a hash, a fetch, a batch ago) fails the change, not replaced.
    const unchanged = change.unchangedSince ? { unchangedSince: change.unchangedSince } : {};
    if ("remove" in change) {
      if (change.onlyEmptyFolder && lstatOrNullSync(absolute)?.isDirectory) {
        await this.#removeFolderIfEmpty(change.path);
        return null;
      }
      await this.#c.disk.remove(change.path, unchanged);
      return null;
    }
    const fullMode = (change.mode & S_IFMT) === 0 ? S_IFREG | change.mode : change.mode;
    if (isFolderMode(fullMode)) {
      await this.#makeFolder(change.path, fullMode, change.createOnly ?? false, parents);
      return null;
    }
    if ((fullMode & S_IFMT) === S_IFLNK) {
      if (change.bytes && write.keepGivenContent) {
        await this.#c.cas.putVerified(change.hash, change.bytes);
      } else if (change.bytes) assertBytesHash(change.hash, change.bytes);
      const target = new TextDecoder().decode(
        change.bytes ?? await this.#c.cas.readBytes(change.hash),
      );
      // #applyChanges makes it durable with the batch (its folder), before recording. A
      // link is made whole in one call: created in place, it refuses what is there.
      try {
        await this.#c.disk.writeLink(change.path, target, {
          createOnly: change.createOnly ?? false,
          syncFolder: false,
          ...unchanged,
        });
      } catch (error) {
        // A folder in the way, as for a file (see #place): removed if empty (the capture
        // records it replaced), then the link made where nothing is now.
        if (!isFolderInTheWay(error, absolute)) throw error;
        this.#removeEmptyFolder(change.path);
        await this.#c.disk.writeLink(change.path, target, { createOnly: true, syncFolder: false });
      }
      return null;
    }
    // Siblings share one check of their folder (made again for each if it failed): the
    // check notes each folder it found (see WorkspaceDisk.checkParents).
    if (!parents.has(parentOf(change.path))) await this.#c.disk.prepareFile(change.path, parents);
    const file = { ...change, mode: fullMode };
    if (later) {
      later.unplaced.push({ change: file, prepared: await this.#prepareFile(file, write) });
      return UNPLACED;
    }
    return await this.#place(file, await this.#prepareFile(file, write), write);
  }

  /** A file's content written under its temp name (see `Cas.prepareWrite`). */
  #prepareFile(change: FileChange, write: WriteFlags): Promise<PreparedFile> {
    const absolute = this.#absolute(change.path);
    return this.#c.cas.prepareWrite(change.hash, absolute, {
      ...write,
      mode: change.mode,
      syncFolder: false,
      tempInStore: this.#c.tempInStore,
      createOnly: change.createOnly ?? false,
      ...(change.unchangedSince
        ? { beforeReplace: () => expectStamp(absolute, change.unchangedSince!) }
        : {}),
      ...(change.bytes ? { bytes: change.bytes, storeBytes: write.keepGivenContent } : {}),
    });
  }

  /**
   * Puts a prepared file in place; where a folder is in the way (rarely: asked for then,
   * not looked for before every write), removes it if empty and writes the file again.
   *
   * @returns What was written (`null`: not a regular file).
   */
  async #place(
    change: FileChange,
    prepared: PreparedFile,
    write: WriteFlags,
  ): Promise<SeenFile | null> {
    try {
      return observeFile(change.path, await prepared.place());
    } catch (error) {
      if (!isFolderInTheWay(error, this.#absolute(change.path))) throw error;
    }
    this.#removeEmptyFolder(change.path);
    // The capture also records what the folder held as deleted.
    const again = await this.#prepareFile(change, write);
    return observeFile(change.path, await again.place());
  }

  /**
   * Makes a folder with `mode`'s permission bits, or sets them on the folder there, through
   * the executor (never through a link). A file or link in the way is replaced, unless
   * `createOnly`.
   *
   * @param checked The batch's folders already found to be folders (see
   * `WorkspaceDisk.makeFolder`).
   * @throws {Deno.errors.AlreadyExists} With `createOnly`, when something else is there.
   * @throws {PathError} When a parent is a link or a file.
   */
  async #makeFolder(
    path: string,
    mode: number,
    createOnly: boolean,
    checked: CheckedFolders,
  ): Promise<void> {
    // Something in the way is rare: looked for only when the folder cannot be made (an
    // lstat of every new folder first costs an error object each, in an initial sync).
    try {
      // Exactly these bits, whatever the umask.
      await this.#c.disk.makeFolder(path, mode, checked);
      return;
    } catch (error) {
      if (!(error instanceof PathError)) throw error;
      this.#c.disk.checkParents(path); // a parent that is a link or a file: its own error
      const found = lstatOrNullSync(this.#absolute(path));
      if (!found || found.isDirectory) throw error;
    }
    if (createOnly) throw new Deno.errors.AlreadyExists(`"${path}" exists and is not a folder`);
    await this.#c.disk.remove(path, { recursive: false }); // a file or link the folder replaces
    await this.#c.disk.makeFolder(path, mode);
  }

  /**
   * Removes a folder only when it is empty (`onlyEmptyFolder`).
   *
   * @throws {FolderNotEmptyError} When it still holds anything.
   * @throws {PathError} When a parent is a link or a file.
   */
  async #removeFolderIfEmpty(path: string): Promise<void> {
    try {
      await this.#c.disk.remove(path, { recursive: false }); // nothing there: already done
    } catch (error) {
      if (error instanceof PathError) throw error;
      if (lstatOrNullSync(this.#absolute(path))?.isDirectory) throw new FolderNotEmptyError(path);
      throw error;
    }
  }

  /**
   * Removes an empty folder where a file must go: it holds nothing, so nothing is lost
   * (the capture records the folder's record replaced by the file).
   *
   * @throws {PathError} When the folder holds anything.
   */
  #removeEmptyFolder(path: string): void {
    try {
      Deno.removeSync(this.#absolute(path));
    } catch {
      throw new PathError(path, "a folder is in the way");
    }
  }

  #absolute(path: string): string {
    return `${this.#c.root}/${path}`;
  }
}
