import { dirname } from "node:path";
import { Cas, EMPTY_HASH, sha256Hex } from "../cas/mod.ts";
import { nextTurn, SerialQueue } from "../concurrency/mod.ts";
import { DirectionalFilter } from "../filter/mod.ts";
import { log } from "../log/mod.ts";
import { lstatOrNullSync } from "../disk/mod.ts";
import { isInside, normalizeWorkspacePath, PathError } from "../paths/mod.ts";
import { type FileState, type Iteration, Store } from "../store/mod.ts";
import { ChangeWriter } from "./_change_writer.ts";
import { WatchDriver } from "./_watch_driver.ts";
import { PipeHolder } from "./_pipe_holder.ts";
import { ProblemLog } from "./_problem_log.ts";
import { Recorder } from "./_recorder.ts";
import { readIgnoreFile } from "./ignore_file.ts";
import { resolveLayout, type WorkspaceLayout } from "./layout.ts";
import { type DiskHooks, ForbiddenWriteError, WorkspaceDisk } from "./workspace_disk.ts";
import type { SeenFile } from "./plan_capture.ts";
import { walkTreeSorted } from "./walk_tree.ts";
import { bytesWriteMode } from "./write_rules.ts";
import type {
  ApplyChangesOptions,
  ApplyChangesResult,
  CaptureResult,
  MoveOptions,
  ScanOptions,
  ScanResult,
  WatchOptions,
  WorkspaceChange,
  WorkspaceOptions,
  WriteOptions,
} from "./workspace_types.ts";

/**
 * Paths captured in one turn of the queue by {@linkcode Workspace.scan} while other work
 * waits: about 15 ms of work when each must be read again.
 */
export const SCAN_SLICE = 128;
/**
 * The most paths of one such turn, reached while nothing else waits: about 0.2 s of
 * work, the longest a write queued meanwhile can wait for. At most 512 did not lower the
 * memory of ten replicas reading 100,000 files again at once (peaks of 148 MiB against 140
 * in one run, within what separates two runs).
 */
const SCAN_SLICE_MAX = 2048;

/**
 * A workspace under Chronicle: its files on disk, its store and CAS, and the one way to
 * change it so that every change is recorded exactly once, whether it comes through this
 * API (write-through) or from the disk (scan and watcher).
 */
export class Workspace {
  /** Where the workspace, its data folder, database and CAS are. */
  readonly layout: WorkspaceLayout;
  /** The iterations and file states recorded. */
  readonly store: Store;
  /** The content store every recorded version's bytes are in. */
  readonly cas: Cas;
  /** The ignore patterns, local and per direction of replication. */
  readonly filter: DirectionalFilter;
  /** Origin of changes found on disk (`local` unless told otherwise). */
  readonly origin: string;
  /** `--ignore` patterns, applied with `.chronicleignore`'s whenever it is read again. */
  readonly #configuredIgnore: string[];
  /** The one executor of changes to the disk (see lib/workspace/workspace_disk.ts). */
  readonly #disk: WorkspaceDisk;
  /** Looks at the disk and records what changed (scan, watcher, after writes). */
  readonly #recorder: Recorder;
  /** Makes batches of changes on disk, durable, then recorded. */
  readonly #writer: ChangeWriter;
  readonly #queue = new SerialQueue();
  /** The watcher, its batches and the safety rescans. */
  readonly #watch: WatchDriver;
  /** Logs each path that is not recorded once, not at every look. */
  readonly #problems = new ProblemLog();
  /** The named pipes held open, so that Deno's watcher never waits on one. */
  readonly #pipes: PipeHolder;
  #closed = false;

  private constructor(
    layout: WorkspaceLayout,
    store: Store,
    cas: Cas,
    filter: DirectionalFilter,
    origin: string,
    tempInStore: boolean,
    hooks: DiskHooks,
    configuredIgnore: string[],
  ) {
    this.layout = layout;
    this.store = store;
    this.cas = cas;
    this.filter = filter;
    this.origin = origin;
    this.#disk = new WorkspaceDisk(layout.root, { hooks });
    this.#configuredIgnore = configuredIgnore;
    this.#pipes = new PipeHolder(layout.root);
    this.#recorder = new Recorder({
      root: layout.root,
      store,
      cas,
      filter,
      origin,
      onIgnoreFile: () => this.#reloadIgnore(),
      report: (problems) => this.#problems.report(problems),
      holdPipes: (paths) => this.#pipes.hold(paths),
      gone: () => this.gone(),
    });
    this.#writer = new ChangeWriter({
      root: layout.root,
      cas,
      disk: this.#disk,
      tempInStore,
      checkPath: (path) => this.checkPath(path),
      capture: (paths, options) => this.#recorder.capture(paths, options),
    });
    this.#watch = new WatchDriver({
      root: layout.root,
      dataDirInside: layout.dataDirInside,
      probe: layout.watchProbe,
      filter,
      queue: this.#queue,
      capture: async (scopes) => {
        if (!this.store.db.isOpen) return;
        // Taken before the folders are walked: what changes in them after it is reported
        // by its own event, recorded in its turn (see foundChangedAfter). RACE: file times
        // come from a coarser clock, so a file written right after this can carry an
        // earlier time and still be found here without one written just before it.
        const began = Date.now();
        await this.#recorder.capture(scopes, { inChangeOrder: true, foundChangedAfter: began });
      },
      scan: (changedBefore) => this.#scan({ keepRecorded: false }, changedBefore),
      closed: () => this.#closed,
    });
  }

  /**
   * Opens a workspace: creates the data folder, opens the store and the CAS, and reads
   * `.chronicleignore`. Does not scan: call {@linkcode Workspace.scan}.
   *
   * @throws {Error} When the workspace folder does not exist or is not a folder.
   */
  static async open(options: WorkspaceOptions): Promise<Workspace> {
    const layout = resolveLayout(options);
    const info = await Deno.stat(layout.root).catch(() => undefined);
    if (!info?.isDirectory) throw new Error(`Workspace "${layout.root}" is not a folder`);
    await Deno.mkdir(layout.dataDir, { recursive: true, mode: 0o700 });
    await Deno.mkdir(dirname(layout.database), { recursive: true });
    const store = Store.open(layout.database);
    try {
      const cas = await Cas.open(layout.casDir, { db: store.db });
      const patterns = [...(options.ignore ?? []), ...await readIgnoreFile(layout.root)];
      const filter = DirectionalFilter.create({
        patterns,
        toReplica: options.ignoreToReplica ?? [],
        toMaster: options.ignoreToMaster ?? [],
        dataDir: layout.dataDirInside,
      });
      // Files written through the CAS's tmp folder, which nobody watches, reach the tree
      // by one rename; that needs the CAS on the workspace's file system.
      const sameFileSystem = Deno.statSync(layout.root).dev === Deno.statSync(layout.casDir).dev;
      // Folders are recorded with the empty content's hash: always to be had, by every
      // reader of a recorded path's content (a replica, a notification's inline bytes).
      if (!(await cas.has(EMPTY_HASH))) await cas.putBytes(new Uint8Array(0));
      return new Workspace(
        layout,
        store,
        cas,
        filter,
        options.origin ?? "local",
        sameFileSystem,
        options.hooks ?? {},
        options.ignore ?? [],
      );
    } catch (error) {
      store.close();
      throw error;
    }
  }

  /** The workspace root (absolute). */
  get root(): string {
    return this.layout.root;
  }

  /**
   * Normalizes and checks a workspace path for recording or writing.
   *
   * @throws {PathError} For an unsafe path, one inside the data folder, or a filtered one.
   */
  checkPath(path: string): string {
    const normalized = normalizeWorkspacePath(path, { dataDir: this.layout.dataDirInside });
    if (this.filter.local.ignores(normalized)) {
      throw new PathError(path, "excluded by the workspace's ignore patterns");
    }
    return normalized;
  }

  /**
   * Records everything that changed on disk since the last look, deletions included.
   *
   * The tree is walked without holding the workspace's queue; only the paths the walk
   * finds new, changed, too recently written to trust, or gone are then captured, in
   * slices of {@linkcode SCAN_SLICE} (doubling up to `SCAN_SLICE_MAX` while nothing else
   * waits), each a turn of its own in the queue. Writes and
   * captures queued meanwhile (a replica's notifications) then wait for one slice at most,
   * never for the whole tree: reading files again takes seconds on 100,000 of them (a
   * catch-up's own writes are trusted at once, see `settledWhenPlaced`). Each slice looks at its paths again, so
   * what changed since the walk is recorded as it is then. Files and links are recorded in
   * the order they were changed (by modification time, then path), after the deletions
   * and the folders.
   */
  scan(options: ScanOptions = {}): Promise<ScanResult> {
    return this.#scan(options);
  }

  /**
   * {@linkcode scan}; with `changedBefore` (the watcher's, see `loss_order.ts`), the files
   * modified since (then changed after the walk began) are left to the watcher.
   */
  async #scan(options: ScanOptions, changedBefore?: number): Promise<ScanResult> {
    const keep = options.keepRecorded ?? true;
    // A scan covering lost events records in the order of the changes (see loss_order.ts).
    const { suspects, skipped } = await this.#walkForSuspects(changedBefore !== undefined);
    const result: ScanResult = { recorded: [], problems: [...skipped], recordedCount: 0 };
    if (this.#closed) return result; // the store may be closing: nothing to record into
    let at = 0;
    let size = SCAN_SLICE;
    while (at < suspects.length) {
      const slice = suspects.slice(at, at + size);
      const shallow = new Set(slice);
      at += slice.length;
      const captured = await this.#queue.run(async () =>
        // A folder among them is looked at alone: what it holds is among the suspects.
        this.#closed
          ? { recorded: [], problems: [] }
          : await this.#recorder.capture(slice, { shallow, inChangeOrder: true, changedBefore })
      );
      result.recordedCount += captured.recorded.length;
      if (keep) result.recorded.push(...captured.recorded);
      result.problems.push(...captured.problems);
      // While nothing else waits, slices grow: each is a commit, and fewer, larger ones
      // write less (a large scan alone, at start, takes a few captures, not hundreds).
      size = this.#queue.waiting > 0 ? SCAN_SLICE : Math.min(size * 2, SCAN_SLICE_MAX);
      // A slice's reads and records are synchronous: without a turn of the event loop in
      // between, no timer runs until the whole scan ends. The heap keeper could not look
      // (a scan reading 30,000 files again peaked 45 MiB higher), nor a heartbeat be sent.
      if (at < suspects.length) await nextTurn();
    }
    return result;
  }

  /**
   * The tree walked, and the paths of it a scan must capture. The walk, in path order, is
   * compared with the store's records as it goes: what it saw of each file is dropped at
   * once, never held for the whole tree, and only the suspects' paths are kept for the
   * scan's captures (which take longest: every file new, changed or too recently written to
   * trust is read again).
   */
  async #walkForSuspects(
    inChangeOrder: boolean,
  ): Promise<{ suspects: string[]; skipped: ScanResult["problems"] }> {
    const skipped: ScanResult["problems"] = [];
    const pipes: string[] = [];
    const walk = walkTreeSorted(this.root, this.filter.local, skipped, pipes);
    const suspects = await this.#recorder.suspects(
      this.#untilClosed(walk),
      () => this.#closed,
      inChangeOrder,
    );
    if (this.#closed) return { suspects: [], skipped };
    // The whole tree was walked: every pipe in it is known, and every unrecordable path.
    this.#pipes.keepOnly(pipes);
    this.#problems.afterWholeWalk(skipped);
    return { suspects, skipped };
  }

  /** The walk, ended early once the workspace closes (its store may be closing). */
  async *#untilClosed(walk: AsyncIterable<SeenFile>): AsyncGenerator<SeenFile> {
    for await (const file of walk) {
      if (this.#closed) return;
      yield file;
    }
  }

  /**
   * What of the workspace was removed while it is open, said for people: its folder, or
   * its data folder (whose database is then gone with it); `null` while both are there. A
   * capture records nothing then (`WorkspaceGoneError`), and a daemon stops.
   *
   * @returns The problem, or `null`.
   */
  gone(): string | null {
    const { root, dataDir } = this.layout;
    const folders: [string, string][] = [[root, "workspace folder"], [dataDir, "data folder"]];
    for (const [folder, what] of folders) {
      if (!lstatOrNullSync(folder)?.isDirectory) return `the ${what} "${folder}" was removed`;
    }
    return null;
  }

  /**
   * Runs `work` in the workspace's queue, so that no capture, scan or write of this
   * workspace runs meanwhile (a replica taking out of the CAS what a capture might share).
   *
   * @param work What to run.
   * @returns What `work` returns.
   */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.#queue.run(work);
  }

  /** Records what changed on disk at these paths now, as the watcher would. */
  capture(paths: string[]): Promise<CaptureResult> {
    return this.#queue.run(() => this.#recorder.capture(paths.map((path) => this.checkPath(path))));
  }

  /**
   * Watches the workspace and records changes in debounced batches, rescanning whenever
   * the OS reports lost events.
   */
  watch(options: WatchOptions = {}): Promise<void> {
    return this.#watch.watch(options);
  }

  /** Whether the OS reports changes to this workspace right now (see {@linkcode watch}). */
  get watching(): boolean {
    return this.#watch.watching;
  }

  /**
   * Stops the watcher of {@linkcode watch} and its safety rescans until
   * {@linkcode resumeWatching}, whose scan records what changed meanwhile. For bulk writes
   * such as a replica's initial sync: each file written would come back as an event to
   * look at, or be read again by a rescan, costing as much again as writing it.
   */
  suspendWatching(): Promise<void> {
    return this.#watch.suspend();
  }

  /**
   * Starts the watcher again after {@linkcode suspendWatching}, then scans: what changed
   * while nobody watched is recorded by that scan.
   */
  resumeWatching(): Promise<void> {
    return this.#watch.resume();
  }

  /** Resolves once every queued capture and write has finished. */
  async settled(): Promise<void> {
    this.#watch.flush();
    await this.#queue.idle();
  }

  /** Writes `bytes` to `path` atomically and records it. */
  writeBytes(
    path: string,
    bytes: Uint8Array,
    options: WriteOptions & { mode?: number } = {},
  ): Promise<Iteration | undefined> {
    return this.#queue.run(async () => {
      const normalized = this.checkPath(path);
      const hash = sha256Hex(bytes);
      const mode = this.#regularFileMode(normalized, options.mode);
      // The bytes travel with the change: written without reading the CAS back, and
      // stored with a deferred folder flush that #applyChanges makes before recording.
      return await this.#applyChecked({ path: normalized, hash, mode, bytes }, options);
    });
  }

  /**
   * The mode of a regular file written by {@linkcode writeBytes} (see `bytesWriteMode`).
   *
   * @throws {ForbiddenWriteError} When `path` is a link, or `mode` is not a regular file's.
   */
  #regularFileMode(path: string, given: number | undefined): number {
    const latest = this.store.latest(path);
    const decision = bytesWriteMode({
      linkOnDisk: lstatOrNullSync(this.#disk.absolute(path))?.isSymlink ?? false,
      recordedMode: latest && !latest.deleted ? latest.mode : undefined,
      given,
    });
    if ("problem" in decision) throw new ForbiddenWriteError(path, decision.problem);
    return decision.mode;
  }

  /** Writes content already in the CAS to `path` atomically and records it. */
  writeContent(
    path: string,
    hash: string,
    mode: number,
    options: WriteOptions = {},
  ): Promise<Iteration | undefined> {
    return this.#queue.run(() => this.#applyOne({ path, hash, mode }, options));
  }

  /** Removes a file, link or folder and records the deletions. */
  remove(path: string, options: WriteOptions = {}): Promise<Iteration | undefined> {
    return this.#queue.run(() => this.#applyOne({ path, remove: true }, options));
  }

  /**
   * Makes many changes at once and records them in one transaction: files are written
   * atomically (temp file, rename) many at a time, and everything is durable before it is
   * recorded: each file fsynced before its rename and each folder flushed once, or, for 32
   * copies (`visibleFirst`) or more, one flush of the file system where `sync -f` may run. The changes' paths must be
   * unrelated (none equal to or inside another), since they are made in no particular
   * order.
   *
   * @param changes Writes of content already in the CAS, and removals.
   * @param options Who made them.
   * @returns What was recorded, and the changes that could not be made (an unsafe path, a
   * folder in the way, a linked parent, a full disk), each with its error. When the flush
   * fails, every change made is reported with that error and none is recorded: the disk
   * then differs from the store, as after a crash, until the next look records it.
   * @throws {TypeError} When two changes' paths are related.
   */
  applyChanges(
    changes: WorkspaceChange[],
    options: ApplyChangesOptions = {},
  ): Promise<ApplyChangesResult> {
    return this.#queue.run(() => this.#writer.applyChanges(changes, options));
  }

  /**
   * Moves a file, link or folder and records both sides in one transaction; with stamps
   * (`MoveOptions`), only if the disk still holds what the caller saw.
   *
   * @throws {ChangedOnDiskError} When a path no longer has the stamp given for it.
   */
  move(from: string, to: string, options: MoveOptions = {}): Promise<Iteration[]> {
    return this.#queue.run(async () => {
      const source = this.checkPath(from);
      const target = this.checkPath(to);
      if (isInside(target, source)) {
        throw new PathError(to, `cannot move "${source}" into itself`);
      }
      const { sourceUnchangedSince, targetUnchangedSince } = options;
      await this.#disk.rename(source, target, {
        ...(sourceUnchangedSince ? { sourceUnchangedSince } : {}),
        ...(targetUnchangedSince !== undefined ? { targetUnchangedSince } : {}),
      });
      this.#carryFileStates(source, target);
      const { recorded } = await this.#recorder.capture([source, target], {
        origin: options.origin,
      });
      return recorded;
    });
  }

  /**
   * Changes a file's permission bits and records the new mode.
   *
   * @throws {ForbiddenWriteError} When `path` is a link: its mode is never changed.
   */
  chmod(path: string, mode: number, options: WriteOptions = {}): Promise<Iteration | undefined> {
    return this.#queue.run(async () => {
      const normalized = this.checkPath(path);
      await this.#disk.chmod(normalized, mode);
      // A folder's own mode changed: what is inside it is not this change.
      const { recorded } = await this.#recorder.capture([normalized], {
        origin: options.origin,
        shallow: new Set([normalized]),
      });
      return recorded.find((iteration) => iteration.path === normalized);
    });
  }

  /** Stops watching, finishes queued work, and closes the store. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#watch.close();
    // Only once nothing watches: a pipe let go while watched makes the watcher wait again.
    this.#pipes.close();
    await this.#queue.idle();
    this.store.close();
  }

  /** One change, its error thrown; the iteration recorded at its path, if any. */
  #applyOne(change: WorkspaceChange, options: WriteOptions): Promise<Iteration | undefined> {
    return this.#applyChecked({ ...change, path: this.checkPath(change.path) }, options);
  }

  /** {@linkcode #applyOne} for a change whose path is already checked: checked once only. */
  async #applyChecked(
    change: WorkspaceChange,
    options: WriteOptions,
  ): Promise<Iteration | undefined> {
    const { recorded, failed } = await this.#writer.applyChanges([change], options, true);
    if (failed[0]) throw failed[0].error;
    return recorded.find((iteration) => iteration.path === change.path);
  }

  /**
   * Reads `.chronicleignore` again and applies it without a restart (issue #18), then
   * scans: paths no longer ignored are recorded. On a master only the agent host can have
   * changed it (a sandbox's write-back of it is refused, see SECURITY.md).
   */
  #reloadIgnore(): void {
    readIgnoreFile(this.root).then((lines) => {
      if (this.#closed) return;
      this.filter.setPatterns([...this.#configuredIgnore, ...lines]);
      log("info", "applied .chronicleignore", { patterns: lines.filter((l) => l.trim()).length });
      return this.scan({ keepRecorded: false }); // queued behind the capture that saw the change
    }).catch((error) => log("warn", "could not apply .chronicleignore", { error }));
  }

  #carryFileStates(from: string, to: string): void {
    const moved: FileState[] = [];
    for (const [path, state] of this.store.fileStates(from)) {
      moved.push({ ...state, path: to + path.slice(from.length) });
    }
    this.store.saveFileStates(moved);
  }
}
