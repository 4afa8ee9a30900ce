import { dirname } from "node:path";
import { Cas, sha256Hex } from "../cas/mod.ts";
import { forEachLimited, SerialQueue } from "../concurrency/mod.ts";
import { DirectionalFilter } from "../filter/mod.ts";
import { errorMessage, log } from "../log/mod.ts";
import {
  canSyncFileSystem,
  isMissing,
  lstatOrNullSync,
  syncDir,
  syncFileSystem,
} from "../disk/mod.ts";
import {
  ancestorsOf,
  isInside,
  normalizeWorkspacePath,
  parentOf,
  PathError,
  PathSet,
} from "../paths/mod.ts";
import {
  type FileState,
  type FileStateChange,
  type Iteration,
  type NewIteration,
  S_IFLNK,
  S_IFMT,
  S_IFREG,
  Store,
} from "../store/mod.ts";
import { Debouncer } from "./debouncer.ts";
import { observe, observePath } from "./file_observation.ts";
import { type LayoutOptions, resolveLayout, type WorkspaceLayout } from "./layout.ts";
import { planCapture, sameStat, type SeenFile, stateToRemember } from "./plan_capture.ts";
import { TreeWatcher } from "./tree_watcher.ts";
import { type DiskHooks, ForbiddenWriteError, WorkspaceDisk } from "./workspace_disk.ts";
import { walkTree } from "./walk_tree.ts";

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
}

/** One change for {@linkcode Workspace.applyChanges}. */
export type WorkspaceChange =
  /**
   * Content written to `path` with `mode` (`st_mode`, or permission bits for a file):
   * already in the CAS, or given as `bytes` (checked against `hash`, and stored). With
   * `createOnly`, it is only created: anything found at `path` (but an empty folder, for a
   * regular file) fails the change with `Deno.errors.AlreadyExists` and is left as it is.
   */
  | { path: string; hash: string; mode: number; bytes?: Uint8Array; createOnly?: boolean }
  /** `path` removed: a file, a link, or a folder with everything in it. */
  | { path: string; remove: true };

/** What {@linkcode Workspace.applyChanges} did. */
export interface ApplyChangesResult {
  /** The iterations recorded, in path order. */
  recorded: Iteration[];
  /** Changes not made, each with its error; every other change was made and recorded. */
  failed: Array<{ path: string; error: unknown }>;
}

/** What a capture (scan or watcher batch) recorded. */
export interface CaptureResult {
  recorded: Iteration[];
  /** Paths that could not be recorded, each with its reason. */
  problems: Array<{ path: string; reason: string }>;
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
   * interval grows to ten times the last scan's duration, so a large workspace is not
   * rescanned continuously. @default {10000}
   */
  rescanMs?: number;
}

/** How many files are read and stored at once during a capture. */
const HASH_CONCURRENCY = 8;
/**
 * With capture on close, the least quiet time for every other event (a deletion, a
 * rename, a mode change, a write whose file is still open): a writer pausing longer than
 * this in the middle of a file is rare, so a file is not recorded half-written.
 */
const OPEN_WRITE_QUIET_MS = 100;
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
 * Paths captured in one turn of the queue by {@linkcode Workspace.scan} while other work
 * waits: about 15 ms of work when each must be read again.
 */
export const SCAN_SLICE = 128;
/**
 * The most paths of one such turn, reached while nothing else waits: about 0.2 s of
 * work, the longest a write queued meanwhile can wait for.
 */
const SCAN_SLICE_MAX = 2048;

/**
 * Changes of one batch written before their flush starts: a large batch is flushed in
 * chunks of this many, each while the next is written.
 */
const FLUSH_CHUNK = 512;

/**
 * A workspace under Chronicle: its files on disk, its store and CAS, and the one way to
 * change it so that every change is recorded exactly once, whether it comes through this
 * API (write-through) or from the disk (scan and watcher).
 */
export class Workspace {
  readonly layout: WorkspaceLayout;
  readonly store: Store;
  readonly cas: Cas;
  readonly filter: DirectionalFilter;
  readonly origin: string;
  /** Whether files are written through the CAS's tmp folder (see `WriteToOptions.tempInStore`). */
  readonly #tempInStore: boolean;
  /** `--ignore` patterns, applied with `.chronicleignore`'s whenever it is read again. */
  readonly #configuredIgnore: string[];
  /** The one executor of changes to the disk (see lib/workspace/workspace_disk.ts). */
  readonly #disk: WorkspaceDisk;
  readonly #queue = new SerialQueue();
  #watcher: TreeWatcher | undefined;
  /** Set by {@linkcode Workspace.watch}, kept while the watcher is suspended. */
  #watchOptions: WatchOptions | undefined;
  #debouncer: Debouncer<string> | undefined;
  #rescanTimer: ReturnType<typeof setTimeout> | undefined;
  /** The watcher's capture queued and not started yet, which new events join. */
  #waitingCapture: Set<string> | null = null;
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
    this.#tempInStore = tempInStore;
    this.#disk = new WorkspaceDisk(layout.root, { hooks });
    this.#configuredIgnore = configuredIgnore;
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
   * never for the whole tree: after a large catch-up, every file just written is read
   * again, which takes seconds on 100,000 files. Each slice looks at its paths again, so
   * what changed since the walk is recorded as it is then.
   */
  async scan(): Promise<CaptureResult> {
    const walked = await walkTree(this.root, "", this.filter.local);
    for (const problem of walked.skipped) log("warn", "not recorded", problem);
    const result: CaptureResult = { recorded: [], problems: [...walked.skipped] };
    if (this.#closed) return result; // the store may be closing: nothing to record into
    const suspects = this.#suspects(walked.files);
    let at = 0;
    let size = SCAN_SLICE;
    while (at < suspects.length) {
      const slice = suspects.slice(at, at + size);
      at += slice.length;
      const captured = await this.#queue.run(async () =>
        this.#closed ? { recorded: [], problems: [] } : await this.#capture(slice)
      );
      result.recorded.push(...captured.recorded);
      result.problems.push(...captured.problems);
      // While nothing else waits, slices grow: each is a commit, and fewer, larger ones
      // write less (a large scan alone, at start, takes a few captures, not hundreds).
      size = this.#queue.waiting > 0 ? SCAN_SLICE : Math.min(size * 2, SCAN_SLICE_MAX);
    }
    return result;
  }

  /**
   * The paths a capture of the whole tree would record or look at again, given the files
   * a walk saw: new, changed or untrusted ones, ones recorded otherwise, and live ones gone.
   */
  #suspects(seen: SeenFile[]): string[] {
    const live = new Map<string, Iteration>();
    this.#addLive(this.store.list(), live);
    const plan = planCapture(seen, this.store.fileStates(), live.keys());
    return [
      ...plan.deleted,
      ...plan.toHash.map((file) => file.path),
      ...plan.unchanged.filter(({ file, hash }) =>
        recordsOtherwise(live.get(file.path), file, hash)
      )
        .map(({ file }) => file.path),
    ];
  }

  /** Records what changed on disk at these paths now, as the watcher would. */
  capture(paths: string[]): Promise<CaptureResult> {
    return this.#queue.run(() => this.#capture(paths.map((path) => this.checkPath(path))));
  }

  /**
   * Watches the workspace and records changes in debounced batches, rescanning whenever
   * the OS reports lost events.
   */
  async watch(options: WatchOptions = {}): Promise<void> {
    if (this.#watchOptions || this.#closed) return;
    this.#watchOptions = options;
    await this.#startWatcher(options);
    this.#scheduleRescan(options.rescanMs ?? 10_000, 0);
  }

  /** Whether the OS reports changes to this workspace right now (see {@linkcode watch}). */
  get watching(): boolean {
    return this.#watcher !== undefined;
  }

  /**
   * Stops the watcher of {@linkcode watch} until {@linkcode resumeWatching}; safety
   * rescans go on. For bulk writes such as a replica's initial sync: each file written
   * would come back as an event to look at, costing as much again as writing it.
   */
  async suspendWatching(): Promise<void> {
    const watcher = this.#watcher;
    const debouncer = this.#debouncer;
    if (!watcher) return;
    this.#watcher = undefined;
    await watcher.close();
    debouncer?.flushNow();
  }

  /**
   * Starts the watcher again after {@linkcode suspendWatching}, then scans: what changed
   * while nobody watched is recorded by that scan.
   */
  async resumeWatching(): Promise<void> {
    const options = this.#watchOptions;
    if (!options || this.#watcher || this.#closed) return;
    await this.#startWatcher(options);
    if (!this.#closed) await this.scan(); // closing meanwhile: nothing left to record into
  }

  async #startWatcher(options: WatchOptions): Promise<void> {
    const captureOnClose = options.captureOnClose ?? true;
    const debounceMs = options.debounceMs ?? 50;
    const debouncer = new Debouncer<string>(
      {
        quietMs: captureOnClose ? Math.max(debounceMs, OPEN_WRITE_QUIET_MS) : debounceMs,
        // A file closed in a folder whose creation is still pending waits for it: files
        // written before the folder's watch existed are then recorded before it.
        waitsFor: (pending, path) =>
          pending.has("") || ancestorsOf(path).some((a) => pending.has(a)),
      },
      (batch) => this.#captureBatch(batch),
    );
    this.#debouncer = debouncer;
    const excluded = (name: string) =>
      name === this.layout.dataDirInside?.split("/")[0] || this.filter.local.ignores(name, true);
    const watcher = new TreeWatcher(this.root, excluded, (event) => {
      if (event.flag === "rescan" || event.kind === "other") debouncer.add([""]);
      // Reads report nothing; "access" is a writer closing the file: its write is complete.
      else if (event.kind === "access" && captureOnClose) {
        debouncer.addReady(this.#relevantPaths(event.paths));
      } else debouncer.add(this.#relevantPaths(event.paths));
    });
    this.#watcher = watcher;
    await watcher.start();
  }

  #scheduleRescan(minimumMs: number, lastScanMs: number): void {
    if (this.#closed) return;
    this.#rescanTimer = setTimeout(async () => {
      const started = Date.now();
      await this.scan().catch((error) => log("error", "safety rescan failed", { error }));
      this.#scheduleRescan(minimumMs, Date.now() - started);
    }, Math.max(minimumMs, lastScanMs * 10));
  }

  /** Resolves once every queued capture and write has finished. */
  async settled(): Promise<void> {
    this.#debouncer?.flushNow();
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
      return await this.#applyOne({ path: normalized, hash, mode, bytes }, options);
    });
  }

  /**
   * The mode of a regular file written by {@linkcode writeBytes}: the one given, else the
   * last recorded one. A link at `path` (on disk or as recorded) is never rewritten by
   * bytes: writing a link's target as content would make the body a new link target.
   *
   * @throws {ForbiddenWriteError} When `path` is a link, or `mode` is not a regular file's.
   */
  #regularFileMode(path: string, given: number | undefined): number {
    const isLink = (mode: number) => (mode & S_IFMT) === S_IFLNK;
    const latest = this.store.latest(path);
    if (
      lstatOrNullSync(this.#absolute(path))?.isSymlink ||
      (latest && !latest.deleted && isLink(latest.mode))
    ) {
      throw new ForbiddenWriteError(
        path,
        "a symbolic link is there; bytes are written to regular files only (remove the link first)",
      );
    }
    const mode = given ?? (latest && !latest.deleted ? latest.mode : 0o100644);
    const type = mode & S_IFMT;
    if (type !== 0 && type !== S_IFREG) {
      throw new ForbiddenWriteError(path, `mode ${mode.toString(8)} is not a regular file's`);
    }
    return mode;
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
    return this.#queue.run(() => this.#applyChanges(changes, options));
  }

  /** Moves a file, link or folder and records both sides in one transaction. */
  move(from: string, to: string, options: WriteOptions = {}): Promise<Iteration[]> {
    return this.#queue.run(async () => {
      const source = this.checkPath(from);
      const target = this.checkPath(to);
      if (isInside(target, source)) {
        throw new PathError(to, `cannot move "${source}" into itself`);
      }
      this.#disk.checkParents(source);
      this.#disk.makeParents(target);
      await Deno.rename(this.#absolute(source), this.#absolute(target));
      this.#carryFileStates(source, target);
      const { recorded } = await this.#capture([source, target], { origin: options.origin });
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
      const { recorded } = await this.#capture([normalized], { origin: options.origin });
      return recorded.find((iteration) => iteration.path === normalized);
    });
  }

  /** Stops watching, finishes queued work, and closes the store. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#rescanTimer);
    await this.#watcher?.close();
    this.#debouncer?.flushNow();
    await this.#queue.idle();
    this.store.close();
  }

  /**
   * Queues a capture of the watcher's batch, or joins the one already queued and not yet
   * started: idle, a change is recorded at once; busy, everything that happens meanwhile
   * is recorded together by the next capture.
   */
  #captureBatch(batch: Set<string>): void {
    if (this.#closed) return;
    if (this.#waitingCapture) {
      for (const scope of batch) this.#waitingCapture.add(scope);
      return;
    }
    const scopes = new Set(batch);
    this.#waitingCapture = scopes;
    this.#queue.run(async () => {
      this.#waitingCapture = null; // later events make the next capture
      const list = scopes.has("") ? [""] : [...scopes];
      if (this.store.db.isOpen) await this.#capture(list);
    }).catch((error) => log("error", "capture failed", { error }));
  }

  #relevantPaths(absolutePaths: string[]): string[] {
    const out: string[] = [];
    for (const absolute of absolutePaths) {
      if (!absolute.startsWith(this.root + "/")) continue;
      const relative = absolute.slice(this.root.length + 1);
      if (this.layout.dataDirInside && isInside(relative, this.layout.dataDirInside)) continue;
      if (this.filter.local.ignores(relative)) continue; // our temp files among others
      out.push(relative);
    }
    return out;
  }

  /**
   * The one capture mechanism: look at each scope on disk (a file, a folder, or a path
   * that is gone), compare with what was recorded, store new content, and record the
   * differences in one transaction.
   */
  async #capture(
    scopes: string[],
    options: {
      origin?: string | undefined;
      /** Files this workspace just wrote, by path: recorded as written, not looked at again. */
      written?: Map<string, WrittenFile>;
    } = {},
  ): Promise<CaptureResult> {
    const problems: CaptureResult["problems"] = [];
    const seen = new Map<string, SeenFile>();
    const live = new Map<string, Iteration>();
    const known = new Map<string, FileState>();
    const written = options.written ?? new Map<string, WrittenFile>();
    const looked = dedupeScopes(this.#withRecordedFileAncestors(scopes));
    // A path where the store still holds files inside it (a folder removed or replaced
    // unseen) is looked at with all beneath it, so those are recorded as deleted.
    const holdingFiles = this.store.withLiveInside(looked.filter((scope) => scope !== ""));
    const single: string[] = []; // a file, a link or nothing: its own record only
    for (const scope of looked) {
      const holding = holdingFiles.has(scope);
      const file = written.get(scope)?.file;
      if (file && !holding) {
        seen.set(scope, file); // just written: a file, with nothing live inside
        continue;
      }
      const walked = await this.#observeScope(scope, seen, problems);
      if (!walked && !holding) {
        single.push(scope);
        continue;
      }
      this.#addLive(this.store.list({ dir: scope }), live);
      for (const [path, state] of this.store.fileStates(scope)) known.set(path, state);
    }
    // Looked up together: a scan captures hundreds of single paths at a time.
    this.#addLive(this.store.latestOf(single).values(), live);
    for (const [path, state] of this.store.fileStatesOf(single)) known.set(path, state);
    const plan = planCapture([...seen.values()], known, live.keys());
    const now = Date.now();
    const changes: NewIteration[] = [];
    const states: FileStateChange[] = [];
    const origin = options.origin ?? this.origin;
    for (const { file, hash } of plan.unchanged) {
      // Unchanged on disk and recorded as such: nothing to record (a quiet rescan of a
      // large tree then takes no write lock and queries nothing per file).
      if (recordsOtherwise(live.get(file.path), file, hash)) {
        changes.push(toChange(file, hash, origin));
      }
    }
    await forEachLimited(plan.toHash, HASH_CONCURRENCY, async (file) => {
      try {
        // Our own hash only for the very file we wrote (a walk may find another there).
        const ours = written.get(file.path);
        const mine = ours && sameStat(ours.file, file) ? ours : undefined;
        const given = mine?.hash;
        // Record the size of the bytes read, not the earlier lstat: a writer may be mid-file.
        const stored = given === undefined
          ? await this.#storeContent(file, known.get(file.path)?.hash)
          : { hash: given, size: file.size };
        const read = { ...file, size: stored.size };
        changes.push(toChange(read, stored.hash, origin));
        // Racy or not as of when the file was seen: for one we wrote, when it was written.
        states.push(stateToRemember(read, stored.hash, mine?.seenAt ?? now));
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) return; // RACE: deleted while we looked; its event follows
        problems.push({ path: file.path, reason: errorMessage(error) });
      }
    });
    for (const path of plan.deleted) {
      changes.push({ path, hash: "", size: 0, mode: 0, deleted: true, origin });
      states.push({ path, forget: true });
    }
    // Deletions first: a file replaced by a folder of the same name (or the reverse) is
    // then never recorded as both present at one sequence, and replicas apply it in order.
    changes.sort((a, b) =>
      Number(b.deleted) - Number(a.deleted) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)
    );
    await this.cas.syncDeferred(); // the content stored above, durable before it is recorded
    const recorded = this.store.record(changes, states); // one commit for both
    if (recorded.some((iteration) => iteration.path === IGNORE_FILE)) this.#reloadIgnore();
    for (const problem of problems) log("warn", "not recorded", problem);
    return { recorded, problems };
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
      return this.scan(); // queued behind the capture that saw the change
    }).catch((error) => log("warn", "could not apply .chronicleignore", { error }));
  }

  /** Adds the live iterations the local filter lets through to `live`, by path. */
  #addLive(iterations: Iterable<Iteration>, live: Map<string, Iteration>): void {
    for (const iteration of iterations) {
      if (!iteration.deleted && !this.filter.local.ignores(iteration.path)) {
        live.set(iteration.path, iteration);
      }
    }
  }

  /**
   * The scopes, plus each ancestor the store holds as a live file: if it is a folder now,
   * the file was replaced, and its deletion must be recorded with (and before) what is
   * inside, never after it.
   */
  #withRecordedFileAncestors(scopes: string[]): string[] {
    const ancestors = new Set<string>();
    for (const scope of scopes) {
      for (const ancestor of ancestorsOf(scope)) {
        if (ancestors.has(ancestor)) break; // and its own ancestors with it
        ancestors.add(ancestor);
      }
    }
    const out = new Set(scopes);
    for (const latest of this.store.latestOf([...ancestors]).values()) {
      if (!latest.deleted) out.add(latest.path);
    }
    return [...out];
  }

  /**
   * Looks at a scope on disk, adding what it finds to `seen`.
   *
   * @returns Whether the scope is a folder, walked.
   */
  async #observeScope(
    scope: string,
    seen: Map<string, SeenFile>,
    problems: CaptureResult["problems"],
  ): Promise<boolean> {
    if (scope !== "" && this.filter.local.ignores(scope)) return false;
    const observation = scope === "" ? { kind: "dir" as const } : observePath(this.root, scope);
    if (observation.kind === "dir") {
      const walked = await walkTree(this.root, scope, this.filter.local);
      for (const file of walked.files) seen.set(file.path, file);
      problems.push(...walked.skipped);
      return true;
    }
    if (observation.kind === "file" || observation.kind === "symlink") {
      seen.set(scope, observation);
    }
    return false;
  }

  /**
   * Stores a file's content. `lastHash`, the content last recorded for the path, is not
   * stored again: re-checking a file that most likely did not change (its mtime was too
   * recent to trust, see stateToRemember) then costs one read and no write.
   */
  async #storeContent(file: SeenFile, lastHash?: string): Promise<{ hash: string; size: number }> {
    const absolute = this.#absolute(file.path);
    if (file.kind === "symlink") {
      const target = Deno.readLinkSync(absolute);
      return await this.cas.putBytes(new TextEncoder().encode(target));
    }
    // Made durable together, by #capture, before anything records them.
    return await this.cas.putFile(absolute, {
      deferSync: true,
      ...(lastHash === undefined ? {} : { alreadyStored: lastHash }),
    });
  }

  /** One change, its error thrown; the iteration recorded at its path, if any. */
  async #applyOne(change: WorkspaceChange, options: WriteOptions): Promise<Iteration | undefined> {
    const path = this.checkPath(change.path);
    const { recorded, failed } = await this.#applyChanges([{ ...change, path }], options);
    if (failed[0]) throw failed[0].error;
    return recorded.find((iteration) => iteration.path === path);
  }

  async #applyChanges(
    changes: WorkspaceChange[],
    options: ApplyChangesOptions,
  ): Promise<ApplyChangesResult> {
    const failed: ApplyChangesResult["failed"] = [];
    const accepted: WorkspaceChange[] = [];
    const taken = new PathSet();
    for (const change of changes) {
      let path: string;
      try {
        path = this.checkPath(change.path);
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
    const parents = new Set<string>();
    let made: WorkspaceChange[] = [];
    const written = new Map<string, WrittenFile>();
    const visibleFirst = options.visibleFirst ?? false;
    // Only copies, visible before they are durable anyway, skip their own fsync for one
    // flush of the file system: an original is renamed into place only once it is durable.
    const flushAtOnce = visibleFirst && accepted.length >= FILE_SYSTEM_SYNC_MIN &&
      canSyncFileSystem();
    const write = { visibleFirst, syncFile: !flushAtOnce };
    // Each chunk is flushed while the next one is written: only the last flush is waited
    // for with nothing else to do. Every flush starts after its chunk's writes.
    const flushes: Promise<void>[] = [];
    for (let at = 0; at < accepted.length; at += FLUSH_CHUNK) {
      const madeHere: WorkspaceChange[] = [];
      await forEachLimited(
        accepted.slice(at, at + FLUSH_CHUNK),
        APPLY_CONCURRENCY,
        async (change) => {
          try {
            const file = await this.#makeChange(change, parents, write);
            madeHere.push(change);
            if (file && "hash" in change) {
              written.set(change.path, { file, hash: change.hash, seenAt: Date.now() });
            }
          } catch (error) {
            failed.push({ path: change.path, error });
          }
        },
      );
      made.push(...madeHere);
      const flush = this.#makeDurable(madeHere, write.syncFile);
      flush.catch(() => {}); // settled below, with the others
      flushes.push(flush);
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
    // Content put with a deferred sync is made durable by #capture, before it records.
    // RACE: a write by someone else after our rename is not seen here; its own watcher
    // event re-hashes the file, because the state remembered for a fresh mtime is marked
    // untrustworthy (see stateToRemember).
    const { recorded } = await this.#capture(made.map((change) => change.path), {
      origin: options.origin,
      written,
    });
    return { recorded, failed };
  }

  /**
   * Makes changes durable before they are recorded. Files not flushed as they were written
   * are flushed by one flush of each file system the changes touched (a mount inside the
   * workspace is another one), or, where that cannot be done, one by one. Then, unless a
   * whole file system was flushed, each changed folder is flushed once.
   */
  async #makeDurable(made: WorkspaceChange[], flushedAsWritten: boolean): Promise<void> {
    if (made.length === 0) return;
    const folders = [...new Set(made.map((change) => this.#absolute(parentOf(change.path))))];
    if (!flushedAsWritten) {
      if (await syncFileSystems(folders)) return;
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
   * @returns What was written, for a regular file put where no folder was; `null` for
   * anything else, which the capture looks at on disk.
   */
  async #makeChange(
    change: WorkspaceChange,
    parents: Set<string>,
    write: { visibleFirst: boolean; syncFile: boolean },
  ): Promise<SeenFile | null> {
    const absolute = this.#absolute(change.path);
    if ("remove" in change) {
      await this.#disk.remove(change.path);
      return null;
    }
    const fullMode = (change.mode & S_IFMT) === 0 ? S_IFREG | change.mode : change.mode;
    if ((fullMode & S_IFMT) === S_IFLNK) {
      if (change.bytes) await this.cas.putVerified(change.hash, change.bytes);
      const target = new TextDecoder().decode(
        change.bytes ?? await this.cas.readBytes(change.hash),
      );
      // #applyChanges makes it durable with the batch (its folder), before recording. A
      // link is made whole in one call: created in place, it refuses what is there.
      await this.#disk.writeLink(change.path, target, {
        createOnly: change.createOnly ?? false,
        syncFolder: false,
      });
      return null;
    }
    // Siblings share one check of their folder (made again for each if it failed).
    const parent = parentOf(change.path);
    if (!parents.has(parent)) {
      await this.#disk.prepareFile(change.path);
      parents.add(parent);
    }
    const writeFile = () =>
      this.cas.writeTo(change.hash, absolute, {
        ...write,
        mode: fullMode,
        syncFolder: false,
        tempInStore: this.#tempInStore,
        createOnly: change.createOnly ?? false,
        ...(change.bytes ? { bytes: change.bytes } : {}),
      });
    try {
      return observeFile(change.path, await writeFile());
    } catch (error) {
      // Rarely a folder is in the way: asked for then, not looked for before every write.
      if (!isFolderInTheWay(error, absolute)) throw error;
    }
    this.#removeEmptyFolder(change.path);
    await writeFile();
    return null; // the capture also records what the folder held as deleted
  }

  /**
   * Removes an empty folder where a file must go: it holds nothing (Chronicle records
   * files, and a folder only through them), so nothing is lost.
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

  #carryFileStates(from: string, to: string): void {
    const moved: FileState[] = [];
    for (const [path, state] of this.store.fileStates(from)) {
      moved.push({ ...state, path: to + path.slice(from.length) });
    }
    this.store.saveFileStates(moved);
  }

  #absolute(path: string): string {
    return `${this.root}/${path}`;
  }
}

/**
 * Flushes the file systems holding these folders, once each.
 *
 * @returns `false` when that cannot be done here (see `syncFileSystem` in lib/disk).
 */
async function syncFileSystems(folders: string[]): Promise<boolean> {
  const byDevice = new Map<number, string>();
  for (const folder of folders) {
    let device: number;
    try {
      device = Deno.statSync(folder).dev;
    } catch (error) {
      if (isMissing(error)) continue; // RACE: removed since; nothing left to flush
      throw error;
    }
    if (!byDevice.has(device)) byDevice.set(device, folder);
  }
  for (const folder of byDevice.values()) {
    if (!(await syncFileSystem(folder))) return false;
  }
  return true;
}

/**
 * Whether a write failed because a folder is at `absolute`: a rename over it says so; a
 * create-only write finds something there, which may be a folder.
 */
function isFolderInTheWay(error: unknown, absolute: string): boolean {
  if (error instanceof Deno.errors.IsADirectory) return true;
  return error instanceof Deno.errors.AlreadyExists &&
    lstatOrNullSync(absolute)?.isDirectory === true;
}

/** A file {@linkcode Workspace} wrote: what it looks like, and the content put in it. */
interface WrittenFile {
  file: SeenFile;
  hash: string;
  /** When `file` was taken (epoch ms): its state is racy as of then, not of the capture. */
  seenAt: number;
}

/** The observation of a file just written, from its handle's status (`null`: not a file). */
function observeFile(path: string, info: Deno.FileInfo): SeenFile | null {
  const observation = observe(path, info);
  return observation.kind === "file" ? observation : null;
}

function toChange(file: SeenFile, hash: string, origin: string): NewIteration {
  return { path: file.path, hash, size: file.size, mode: file.mode, deleted: false, origin };
}

/** Whether a file found unchanged on disk is recorded with other content or mode. */
function recordsOtherwise(recorded: Iteration | undefined, file: SeenFile, hash: string): boolean {
  return recorded?.hash !== hash || recorded.mode !== file.mode;
}

/** The scopes without those inside another (ancestors are shorter, so they come first). */
function dedupeScopes(scopes: string[]): string[] {
  const kept = new PathSet();
  for (const scope of [...new Set(scopes)].sort((a, b) => a.length - b.length)) {
    if (!kept.covers(scope)) kept.add(scope);
  }
  return kept.paths;
}

/** The workspace's own ignore file, read at open and again whenever it changes. */
const IGNORE_FILE = ".chronicleignore";

async function readIgnoreFile(root: string): Promise<string[]> {
  try {
    return (await Deno.readTextFile(`${root}/${IGNORE_FILE}`)).split(/\r?\n/);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
}
