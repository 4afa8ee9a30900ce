import type { Cas } from "../cas/mod.ts";
import { forEachLimited } from "../concurrency/mod.ts";
import type { DirectionalFilter } from "../filter/mod.ts";
import { errorMessage } from "../log/mod.ts";
import { ancestorsOf, isInside, parentOf } from "../paths/mod.ts";
import {
  type FileState,
  type FileStateChange,
  isFolderMode,
  type Iteration,
  type LiveState,
  type NewIteration,
  type Store,
} from "../store/mod.ts";
import {
  byDepthThenPath,
  inChangeOrder,
  inGivenOrder,
  pathsInChangeOrder,
} from "./capture_order.ts";
import { type Observation, observePath } from "./file_observation.ts";
import { IGNORE_FILE } from "./ignore_file.ts";
import {
  changedDuringScan,
  dedupeScopes,
  FOLDER_HASH,
  planCapture,
  sameStat,
  type ScanVerdict,
  scanVerdict,
  type SeenFile,
  stateToRemember,
} from "./plan_capture.ts";
import { recordablePath, specialFileReason, type Unrecorded } from "./recordable.ts";
import { compareCodePoints, walkTree } from "./walk_tree.ts";
import { type CaptureResult, WorkspaceGoneError } from "./workspace_types.ts";

/** How many files are read and stored at once during a capture. */
const HASH_CONCURRENCY = 8;

/** Paths whose file states {@linkcode Recorder.suspects} reads in one query. */
const STATE_PAGE = 1000;

/** What a {@linkcode Recorder} works on. */
export interface RecorderContext {
  root: string;
  store: Store;
  cas: Cas;
  filter: DirectionalFilter;
  /** Origin of changes found on disk. */
  origin: string;
  /** Called after a capture recorded a change of {@linkcode IGNORE_FILE}. */
  onIgnoreFile: () => void;
  /** Told the paths a capture could not record (it logs them, once each). */
  report: (problems: readonly Unrecorded[]) => void;
  /** Told the named pipes a capture found (see `PipeHolder`). */
  holdPipes: (paths: readonly string[]) => void;
  /** What of the workspace is no longer there (see `Workspace.gone`); `null`: all is. */
  gone: () => string | null;
}

/**
 * The one capture mechanism of a workspace: looks at paths on disk, compares them with
 * what the store holds, stores new content and records the differences. Internal to
 * `Workspace`, which runs it in its queue.
 */
export class Recorder {
  readonly #c: RecorderContext;

  /**
   * Makes the recorder.
   *
   * @param context What it works on.
   */
  constructor(context: RecorderContext) {
    this.#c = context;
  }

  /**
   * The one capture mechanism: look at each scope on disk (a file, a folder, or a path
   * that is gone), compare with what was recorded, store new content, and record the
   * differences in one transaction.
   */
  async capture(
    scopes: string[],
    options: {
      origin?: string | undefined;
      /** Files this workspace just wrote, by path: recorded as written, not looked at again. */
      written?: Map<string, WrittenFile>;
      /**
       * Scopes looked at alone even when they are folders: what is inside a folder this
       * workspace just made or changed the mode of is not its change (a local file in it,
       * not yet recorded, must not be recorded with this change's origin).
       */
      shallow?: ReadonlySet<string>;
      /** What the caller's own last look found at some `shallow` folders: not looked again. */
      lookedAt?: ReadonlyMap<string, Observation>;
      /**
       * Paths the caller's change removed: anything found there (or inside) is not that
       * change's but someone else's, landing after the removal, and is recorded with the
       * workspace's own origin, not `origin` (on a replica: a local change, written back,
       * not taken for the master's), after the removal itself (with `origin`).
       */
      removed?: ReadonlySet<string>;
      /**
       * Folders the caller's change made or gave a mode (the full mode, by path) whose
       * mode someone else changed right after: the caller's change is recorded with
       * `origin`, then the folder as it is now with the workspace's own.
       */
      overtaken?: ReadonlyMap<string, number>;
      /**
       * Files and links recorded in the order they were changed (by modification time,
       * then path), after the deletions and the folders, instead of by depth then path: for
       * what is found on disk, whose order is not otherwise known.
       */
      inChangeOrder?: boolean;
      /**
       * The order the scopes' changes were made in (unrelated paths): recorded in that
       * order (see `inGivenOrder`), not by depth then path.
       */
      order?: readonly string[] | undefined;
      /**
       * Files and links modified after this millisecond (epoch ms) and not after now are
       * left as they are, neither recorded nor taken for deleted: changed after a scan's
       * walk began, they are the watcher's to report (see `changedDuringScan`). A
       * modification time after now was set, not made by a write: recorded.
       */
      changedBefore?: number | undefined;
      /**
       * Files and links found by walking a folder among `scopes`, not named in `scopes`
       * themselves, modified after this millisecond and not after now, are left to their
       * own events (as `changedBefore` leaves them, see `changedDuringScan`). A watcher's
       * capture walks folders that may be written to meanwhile, and a directory read
       * returns a file added during it or not by where its name hashes: it could find a
       * later file without an earlier one, and record them out of the order they were
       * made. The folder's watch was there before the capture began, so each file changed
       * since has an event of its own.
       */
      foundChangedAfter?: number | undefined;
    } = {},
  ): Promise<CaptureResult> {
    // A workspace removed with its data folder (`rm -rf` of a sandbox's folder) is no edit
    // to record: recorded, every file's removal would reach the replicas or the master.
    const gone = this.#c.gone();
    if (gone !== null) throw new WorkspaceGoneError(gone);
    const problems: CaptureResult["problems"] = [];
    // The scan's own check (see recordablePath): a watcher's event names any path on disk,
    // and one a replica would refuse is never recorded, nor sent.
    scopes = scopes.flatMap((scope) => {
      const path = scope === "" ? "" : recordablePath(scope, problems);
      return path === null ? [] : [path];
    });
    const seen = new Map<string, SeenFile>();
    const live = new Map<string, Iteration>();
    const known = new Map<string, FileState>();
    const written = options.written ?? new Map<string, WrittenFile>();
    const { scopes: withAncestors, unrecordedAncestors } = this.#withRecordedFileAncestors(scopes);
    const looked = dedupeScopes(withAncestors, options.shallow);
    // A path where the store still holds files inside it (a folder removed or replaced
    // unseen) is looked at with all beneath it, so those are recorded as deleted.
    const holdingFiles = this.#c.store.withLiveInside(looked.filter((scope) => scope !== ""));
    const single: string[] = []; // a file, a link or nothing: its own record only
    for (const scope of looked) {
      const holding = holdingFiles.has(scope);
      const file = written.get(scope)?.file;
      if (file && !holding) {
        seen.set(scope, file); // just written: a file, with nothing live inside
        continue;
      }
      if (options.shallow?.has(scope) && this.#observeFolderAlone(scope, seen, options.lookedAt)) {
        single.push(scope);
        continue;
      }
      const walked = await this.#observeScope(scope, seen, problems);
      if (!walked && !holding) {
        single.push(scope);
        continue;
      }
      this.#addLive(this.#c.store.list({ dir: scope }), live);
      for (const [path, state] of this.#c.store.fileStates(scope)) known.set(path, state);
    }
    // Folders a change was made in (created by a write's parents, or by someone else) and
    // never recorded: recorded now, so every folder on disk has its own record.
    for (const ancestor of unrecordedAncestors) {
      if (!looked.some((scope) => isInside(ancestor, scope))) {
        if (this.#observeFolderAlone(ancestor, seen)) single.push(ancestor);
      }
    }
    // Looked up together: a scan captures hundreds of single paths at a time.
    this.#addLive(this.#c.store.latestOf(single).values(), live);
    for (const [path, state] of this.#c.store.fileStatesOf(single)) known.set(path, state);
    if (options.changedBefore !== undefined) leaveLate(seen, live, options.changedBefore);
    if (options.foundChangedAfter !== undefined) {
      leaveLate(seen, live, options.foundChangedAfter, new Set(scopes));
    }
    const plan = planCapture([...seen.values()], known, live.keys());
    const now = Date.now();
    const changes: NewIteration[] = [];
    const states: FileStateChange[] = [];
    const origin = options.origin ?? this.#c.origin;
    // A path removed, or inside one (a folder put there, with what it holds), found holding
    // something: not the change's.
    const removed = options.removed ?? new Set<string>();
    const overtaken = options.overtaken ?? new Map<string, number>();
    const originOf = (path: string) =>
      overtaken.has(path) ||
        (removed.size > 0 && [path, ...ancestorsOf(path)].some((p) => removed.has(p)))
        ? this.#c.origin
        : origin;
    // The removal itself happened first: recorded with the change's origin, before what
    // was put there after it (even the very content removed, put back), so the history
    // says which came first (a replica journals what was put there as made on top of
    // the master's removal, not as a conflict with it).
    const refilled = new Set<string>();
    const found = [...removed].filter((path) => seen.has(path));
    for (const [path, before] of this.#c.store.latestOf(found)) {
      if (before.deleted) continue;
      refilled.add(path);
      changes.push({ path, hash: "", size: 0, mode: 0, deleted: true, origin });
    }
    // Likewise a folder's mode set by the change, then changed by someone else.
    for (const [path, mode] of overtaken) {
      if (seen.get(path)?.kind !== "dir") continue; // gone since: the next look records it
      refilled.add(path);
      changes.push({ path, hash: FOLDER_HASH, size: 0, mode, deleted: false, origin });
    }
    for (const { file, hash } of plan.unchanged) {
      // Unchanged on disk and recorded as such: nothing to record (a quiet rescan of a
      // large tree then takes no write lock and queries nothing per file).
      if (recordsOtherwise(live.get(file.path), file, hash) || refilled.has(file.path)) {
        changes.push(toChange(file, hash, originOf(file.path)));
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
        changes.push(toChange(read, stored.hash, originOf(file.path)));
        // Racy or not as of when the file was seen: for one we wrote, when it was written.
        states.push(stateToRemember(read, stored.hash, mine?.seenAt ?? now, mine?.settled));
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
    // Deletions deepest first (a folder after what was in it), creations shallowest first
    // (a folder before what goes in it), as PROTOCOL.md §8 orders them (capture_order.ts).
    // What is found on disk, files after folders in the order they were changed (a
    // watcher's batch, a scan's slice): a replica's writes reach the master in the order made.
    changes.sort(
      options.order
        ? inGivenOrder(options.order)
        : options.inChangeOrder
        ? inChangeOrder((path) => seen.get(path)?.mtimeMs ?? 0)
        : byDepthThenPath,
    );
    // The content stored above is durable before it is recorded: its object files flushed
    // now, its small rows committed in the record's own transaction (one commit for all).
    // Only the rows this record references: others held (content fetched for a later
    // batch of a replica's, say) stay in memory for their own record, not read back from
    // the table. With nothing to record they all stay held: nothing references them.
    await this.#c.cas.syncDeferred({ keepRowsHeld: true });
    let forgetRows = () => {};
    const referenced = new Set<string>();
    for (const change of changes) if (change.hash !== "") referenced.add(change.hash);
    const recorded = this.#c.store.record(changes, states, {
      alongside: () => (forgetRows = this.#c.cas.writeHeldRows(referenced)),
    });
    forgetRows();
    if (recorded.some((iteration) => iteration.path === IGNORE_FILE)) this.#c.onIgnoreFile();
    this.#c.report(problems);
    return { recorded, problems };
  }

  /**
   * The paths a capture of the whole tree would record or look at again, given the files
   * a walk sees, sorted by path (`walkTreeSorted`): new, changed or untrusted
   * ones, ones recorded otherwise, and live ones gone. The walk and the store's records
   * ({@linkcode Store.liveStatesAfter}, a page at a time) are merged in the same order,
   * so neither is ever held whole: on 100,000 paths each would be 100,000 objects. Only the
   * suspects' paths are kept. None once `closed()` says the store is closing. Files come
   * in path order, or with `inChangeOrder` in the order they were changed (a scan covering
   * lost events: see `loss_order.ts`), which costs a large scan about a sixth more time
   * (its slices then hold files of many folders).
   */
  async suspects(
    walk: AsyncIterable<SeenFile>,
    closed: () => boolean,
    inChangeOrder = false,
  ): Promise<string[]> {
    const deleted: string[] = [];
    const otherwiseFolders: string[] = [];
    // Of each suspect file only its path (and time, for change order), not what the walk
    // saw: at a first scan every file is a suspect, 100,000 on a large tree.
    const files: string[] = [];
    const times: number[] = [];
    const place = (file: SeenFile, verdict: ScanVerdict) => {
      if (verdict === "unchanged") return;
      if (file.kind === "dir") {
        otherwiseFolders.push(file.path);
        return;
      }
      files.push(file.path);
      if (inChangeOrder) times.push(file.mtimeMs);
    };
    const live = new LivePages(this.#c.store);
    // A folder is asked of the filter as a folder: a folder-only pattern (`build/`) leaves
    // it out, so a walk that skipped it never records it removed.
    const gone = ({ path, mode }: LiveState) => {
      if (!this.#c.filter.local.ignores(path, isFolderMode(mode))) deleted.push(path);
    };
    // Seen and not live (new paths, at a first scan all of them): what the scanner last
    // saw of them, a page at a time.
    let unrecorded: SeenFile[] = [];
    const placeUnrecorded = () => {
      const known = this.#c.store.fileStatesOf(
        unrecorded.filter((file) => file.kind !== "dir").map((file) => file.path),
      );
      for (const file of unrecorded) {
        place(file, scanVerdict(file, known.get(file.path), undefined));
      }
      unrecorded = [];
    };
    for await (const file of walk) {
      let next = live.peek();
      while (next !== undefined && compareCodePoints(next.path, file.path) < 0) {
        gone(live.take());
        next = live.peek();
      }
      if (next?.path === file.path) {
        live.take();
        // One the local filter leaves out is no record of this file: as if not live.
        if (!this.#c.filter.local.ignores(next.path, isFolderMode(next.mode))) {
          place(file, scanVerdict(file, next.state ?? undefined, next));
          continue;
        }
      }
      unrecorded.push(file);
      if (unrecorded.length >= STATE_PAGE) placeUnrecorded();
    }
    if (closed()) return []; // the walk ended early: the store may be closing
    for (let next = live.peek(); next !== undefined; next = live.peek()) gone(live.take());
    placeUnrecorded();
    // New folders before the files: a slice's files then find their folders recorded. The
    // files in the order they were changed, as each slice records its own, if asked.
    const ordered = inChangeOrder ? pathsInChangeOrder(files, times) : files;
    return [...deleted, ...otherwiseFolders, ...ordered];
  }

  /** Adds the live iterations the local filter lets through to `live`, by path. */
  #addLive(iterations: Iterable<Iteration>, live: Map<string, Iteration>): void {
    for (const iteration of iterations) {
      if (
        !iteration.deleted &&
        !this.#c.filter.local.ignores(iteration.path, isFolderMode(iteration.mode))
      ) {
        live.set(iteration.path, iteration);
      }
    }
  }

  /**
   * The scopes, plus each ancestor the store holds as a live file: if it is a folder now,
   * the file was replaced, and its deletion must be recorded with (and before) what is
   * inside, never after it. Also the ancestors the store holds no live record of, to be
   * looked at alone (a folder made by a write of what is inside it).
   */
  #withRecordedFileAncestors(
    scopes: string[],
  ): { scopes: string[]; unrecordedAncestors: string[] } {
    const ancestors = new Set<string>();
    for (const scope of scopes) {
      // Innermost first, each made only when needed: siblings stop at their shared parent.
      for (let ancestor = parentOf(scope); ancestor !== ""; ancestor = parentOf(ancestor)) {
        if (ancestors.has(ancestor)) break; // and its own ancestors with it
        ancestors.add(ancestor);
      }
    }
    const out = new Set(scopes);
    const latest = this.#c.store.latestOf([...ancestors]);
    const unrecordedAncestors: string[] = [];
    for (const ancestor of ancestors) {
      const recorded = latest.get(ancestor);
      if (!recorded || recorded.deleted) unrecordedAncestors.push(ancestor);
      else if (!isFolderMode(recorded.mode)) out.add(ancestor);
    }
    return { scopes: [...out], unrecordedAncestors };
  }

  /**
   * Looks at one folder, not what is inside, adding it to `seen` when it is one and the
   * filter lets it through (not looked at again when in `lookedAt`, the caller's look).
   *
   * @returns Whether it is a folder (looked at, or filtered).
   */
  #observeFolderAlone(
    path: string,
    seen: Map<string, SeenFile>,
    lookedAt?: ReadonlyMap<string, Observation>,
  ): boolean {
    const observation = lookedAt?.get(path) ?? observePath(this.#c.root, path);
    if (observation.kind !== "dir") return false;
    if (!this.#c.filter.local.ignores(path, true)) seen.set(path, observation);
    return true;
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
    if (scope !== "" && this.#c.filter.local.ignores(scope)) return false;
    const observation = scope === "" ? { kind: "dir" as const } : observePath(this.#c.root, scope);
    if (observation.kind === "dir") {
      // A folder a folder-only pattern leaves out: neither it nor what it holds.
      if (scope !== "" && this.#c.filter.local.ignores(scope, true)) return true;
      if (scope !== "") seen.set(scope, observation as SeenFile); // the folder itself
      const walked = await walkTree(this.#c.root, scope, this.#c.filter.local);
      for (const file of walked.files) seen.set(file.path, file);
      problems.push(...walked.skipped);
      this.#c.holdPipes(walked.pipes);
      return true;
    }
    if (observation.kind === "file" || observation.kind === "symlink") {
      seen.set(scope, observation);
    } else if (observation.kind === "other") {
      // Never opened: a named pipe's reader would wait for a writer (see PipeHolder).
      problems.push({ path: scope, reason: specialFileReason(observation.what) });
      if (observation.pipe) this.#c.holdPipes([scope]);
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
      return await this.#c.cas.putBytes(new TextEncoder().encode(target));
    }
    // Made durable together, by #capture, before anything records them.
    return await this.#c.cas.putFile(absolute, {
      deferSync: true,
      ...(lastHash === undefined ? {} : { alreadyStored: lastHash }),
    });
  }

  #absolute(path: string): string {
    return `${this.#c.root}/${path}`;
  }
}

/** A file {@linkcode Workspace} wrote: what it looks like, and the content put in it. */
export interface WrittenFile {
  file: SeenFile;
  hash: string;
  /** When `file` was taken (epoch ms): its state is racy as of then, not of the capture. */
  seenAt: number;
  /**
   * Whether it was placed settled (see `settledWhenPlaced`): then its state is never racy.
   * @default {false}
   */
  settled?: boolean;
}

function toChange(file: SeenFile, hash: string, origin: string): NewIteration {
  return { path: file.path, hash, size: file.size, mode: file.mode, deleted: false, origin };
}

/** Whether a file found unchanged on disk is recorded with other content or mode. */
function recordsOtherwise(recorded: Iteration | undefined, file: SeenFile, hash: string): boolean {
  return recorded?.hash !== hash || recorded.mode !== file.mode;
}

/**
 * Leaves out of a capture the files and links `seen` holds that were changed since
 * `changedBefore` ({@linkcode changedDuringScan}), but for those `named`: neither recorded
 * nor, if live, taken for deleted.
 */
function leaveLate(
  seen: Map<string, SeenFile>,
  live: Map<string, Iteration>,
  changedBefore: number,
  named: ReadonlySet<string> = new Set(),
): void {
  const now = Date.now();
  for (const [path, file] of seen) {
    if (!named.has(path) && changedDuringScan(file, changedBefore, now)) {
      seen.delete(path);
      live.delete(path);
    }
  }
}

/** The store's live paths in order, read a page of {@linkcode STATE_PAGE} at a time. */
class LivePages {
  readonly #store: Store;
  #page: LiveState[] = [];
  #at = 0;
  #ended = false;

  constructor(store: Store) {
    this.#store = store;
  }

  /** The next live path, not taken; `undefined` after the last. */
  peek(): LiveState | undefined {
    if (this.#at === this.#page.length && !this.#ended) {
      const after = this.#page.at(-1)?.path ?? null;
      this.#page = this.#store.liveStatesAfter(after, STATE_PAGE);
      this.#at = 0;
      this.#ended = this.#page.length < STATE_PAGE;
    }
    return this.#page[this.#at];
  }

  /** Takes the next live path ({@linkcode peek} first: there is one). */
  take(): LiveState {
    return this.#page[this.#at++]!;
  }
}
