import type { Cas } from "../cas/mod.ts";
import { CheckpointWhileBusy, inTransaction } from "../db/mod.ts";
import type { DirectionalFilter } from "../filter/mod.ts";
import { log } from "../log/mod.ts";
import { isFolderMode, type Iteration, ORIGINS, type Store } from "../store/mod.ts";
import type { Workspace } from "../workspace/mod.ts";
import { type CapturedChange, planJournalEntries } from "./journal_plan.ts";
import type { MasterVersion } from "./replica_paths.ts";
import { PartialContents } from "./partial_contents.ts";
import { WriteBackPieces } from "./writeback_pieces.ts";
import { MasterContentTier } from "./master_content_tier.ts";
import type { ReplicaMode } from "./replica_state.ts";
import { contentsKeptHere, openReplicaTables, type ReplicaTables } from "./replica_tables.ts";
import { validateSandboxId } from "./sandbox_id.ts";
import type { NotificationMessage } from "../wire/mod.ts";

/**
 * Origins of iterations a replica never writes back: what it applied from the master, and
 * a local-sync merge left with conflict markers for a person. Everything else recorded
 * here is a local change, whoever made it (an edit seen on disk, a REST write, a restore,
 * a rollback), and goes to the master, which records it under the sandbox's id.
 */
const NOT_WRITTEN_BACK: readonly string[] = [ORIGINS.master, ORIGINS.localSyncMerge];

const APPLIED_META = "replica.applied_sequence";
const JOURNALED_META = "replica.journaled_through";
const SANDBOX_META = "replica.sandbox_id";
const RESYNC_META = "replica.resync_pending";
/** The paths not applied a replica lists at most (the newest): `status` says when it is full. */
export const PROBLEMS_KEPT = 100;

/** What a {@linkcode ReplicaCore} is made of. */
export interface ReplicaCoreOptions {
  /** The replica's workspace: notifications are applied through it, its captures are journaled. */
  workspace: Workspace;
  /** The replica's store. @default {workspace.store} */
  store?: Store | undefined;
  /** The replica's CAS. @default {workspace.cas} */
  cas?: Cas | undefined;
  /** Directional filters. @default {workspace.filter} */
  filter?: DirectionalFilter | undefined;
  /** The replica's identity. @default {the stored one, or a new `sandbox-<uuid>` stored for next time} */
  sandboxId?: string | undefined;
  /** How rejected write-backs are treated. @default {"sandbox"} */
  mode?: ReplicaMode | undefined;
  /**
   * Whether the content of master versions written to the workspace is kept in the CAS
   * too. A sandbox replica keeps none (the master holds every version, and the workspace
   * holds the latest): its catch-up writes each file once, and what it lacks is read
   * through the master (`MasterContentTier`). A person's local-sync copy keeps it all, to
   * weigh conflicts and read history offline; so does a replica with a tier of its own
   * (an object store). @default {mode === "local-sync"}
   */
  keepMasterContent?: boolean | undefined;
  /** Largest content written back. @default {67108864} */
  maxWritebackBytes?: number | undefined;
  /** The master's heartbeat interval. @default {1000} */
  heartbeatMs?: number | undefined;
  /** Progress bar (`true`), log lines (`false`) or by terminal (`"auto"`). @default {"auto"} */
  progress?: boolean | "auto" | undefined;
}

/**
 * What a replica keeps across its connections: its identity, tables and position, the
 * notifications a cut connection carried, the problems seen, and the journaling of local
 * changes. Each connection (`ReplicaSession`) works on it; `replica.ts` owns its life.
 */
export class ReplicaCore {
  readonly sandboxId: string;
  readonly workspace: Workspace;
  readonly store: Store;
  readonly cas: Cas;
  readonly filter: DirectionalFilter;
  readonly tables: ReplicaTables;
  readonly mode: ReplicaMode;
  /** See {@linkcode ReplicaCoreOptions.keepMasterContent}. */
  readonly keepsMasterContent: boolean;
  /** Reads of content this replica did not keep, through the open connection. */
  readonly masterTier = new MasterContentTier();
  /** The watcher's pauses and resumes, in the order asked (see `#watchTransition`). */
  #watchTransitions: Promise<void> = Promise.resolve();
  /**
   * Contents fetched in ranges because a connection's end cut their whole fetch short,
   * with what the connections since carried of them (see `PartialContents`).
   */
  readonly partials = new PartialContents();
  /** What is sent in pieces of write-back, across connections (see `WriteBackPieces`). */
  readonly writeBackPieces = new WriteBackPieces();
  /**
   * The store's WAL checkpoints, run by a worker while a large catch-up commits a batch
   * every few milliseconds (a copy and two fsyncs each, off the apply path), by the
   * commits themselves the rest of the time; `replica.ts` closes it.
   */
  readonly checkpoints: CheckpointWhileBusy;
  readonly options: ReplicaCoreOptions;
  /** The highest master sequence applied here. */
  applied: number;
  /**
   * Notifications that arrived on a connection which ended before they could be applied
   * (mostly: their content was still being fetched), in the order they came, all after
   * `applied`. The next connection fetches their content and applies them before it asks
   * to catch up, from after them: each connection keeps what it carried, however often
   * connections are cut, instead of asking again for the same start of a replay.
   */
  carried: NotificationMessage[] = [];
  /** The master's sequence as last heard (a heartbeat, a barrier, or a notification received). */
  masterSequence = 0;
  /** Recent paths that could not be applied, with the reason. */
  problems: { path: string; reason: string }[] = [];
  #closed = false;
  /** The store sequence up to which local changes are journaled (or found to be none). */
  #journaledThrough = 0;
  #unsubscribe: () => void = () => {};

  /**
   * @param options See {@linkcode ReplicaCoreOptions}.
   * @throws {TypeError} For a bad sandbox id.
   */
  constructor(options: ReplicaCoreOptions) {
    this.options = options;
    this.workspace = options.workspace;
    this.store = options.store ?? options.workspace.store;
    this.cas = options.cas ?? options.workspace.cas;
    this.filter = options.filter ?? options.workspace.filter;
    this.mode = options.mode ?? "sandbox";
    this.keepsMasterContent = options.keepMasterContent ?? this.mode === "local-sync";
    if (!this.keepsMasterContent) this.cas.setTier(this.masterTier);
    this.tables = openReplicaTables(this.store.db);
    this.checkpoints = new CheckpointWhileBusy(this.store.db);
    const stored = this.store.getMeta(SANDBOX_META);
    this.sandboxId = validateSandboxId(
      options.sandboxId ?? stored ?? `sandbox-${crypto.randomUUID()}`,
    );
    if (stored !== this.sandboxId) this.store.setMeta(SANDBOX_META, this.sandboxId);
    this.applied = Number(this.store.getMeta(APPLIED_META) ?? "0") || 0;
  }

  /**
   * Journals local changes captured while no replica ran (or before a crash), then every
   * new capture: both in this same tick, so none falls between.
   */
  startJournaling(): void {
    // A journal from before the meta key was kept tells it by its entries alone.
    this.#journaledThrough = Math.max(
      Number(this.store.getMeta(JOURNALED_META) ?? "0") || 0,
      this.tables.journal.sourceHighWater(),
    );
    const missed = this.store.changesSince(this.#journaledThrough, {
      notOrigins: NOT_WRITTEN_BACK,
    });
    this.journalCaptured(missed);
    // Every local iteration, whoever recorded it: a capture, a write through the API, a
    // command run against this database.
    this.#unsubscribe = this.store.onRecorded((recorded) => this.journalCaptured(recorded));
  }

  /** Stops journaling (the replica closes). */
  stopJournaling(): void {
    this.#closed = true;
    this.#unsubscribe();
    if (!this.keepsMasterContent) this.cas.setTier(null);
  }

  /**
   * Turns local changes (iterations of this workspace's origin) into journal entries. A
   * path found holding a master version this replica was writing or removing when it
   * stopped (see `ApplyIntents`) is that version, applied: not a local change. A local
   * change recorded on top of a master version an apply recorded and has not remembered
   * yet has seen that version (see `#appliedUnder`).
   */
  journalCaptured(recorded: Iteration[]): void {
    if (this.#closed || recorded.length === 0) return;
    const { paths, journal, intents } = this.tables;
    const changes: CapturedChange[] = [];
    const adopted = new Map<string, MasterVersion>();
    const seen = new Map<string, number>();
    const deferred = new Set<string>();
    const filtered = new Set<string>();
    const masterContent = new Map<string, string>();
    let through = 0;
    const own = recorded.filter((iteration) => !NOT_WRITTEN_BACK.includes(iteration.origin));
    const states = paths.getMany(own.map((iteration) => iteration.path));
    for (const current of own) {
      through = Math.max(through, current.sequence);
      const state = states.get(current.path)!;
      const applied = adopted.get(current.path)?.sequence ?? state.applied.sequence;
      const version = intents.match(current.path, current.hash, current.mode);
      // Only a version newer than the one applied: a note left by a failed write is stale
      // once a later version of the path was applied.
      if (version && version.sequence > applied) {
        adopted.set(current.path, version);
        continue;
      }
      const previous = current.iteration > 1
        ? this.store.iteration(current.path, current.iteration - 1)
        : undefined;
      changes.push({ current, previous });
      seen.set(current.path, Math.max(applied, this.#appliedUnder(current.path, previous)));
      if (state.deferred) deferred.add(current.path);
      const folder = isFolderMode(current.deleted ? previous?.mode ?? 0 : current.mode);
      if (this.filter.toMaster.ignores(current.path, folder)) filtered.add(current.path);
      const held = adopted.get(current.path) ?? state.applied;
      if (!held.deleted && !isFolderMode(held.mode)) masterContent.set(current.path, held.hash);
    }
    if (through === 0) return; // none of this workspace's own (the replica's applies)
    inTransaction(this.store.db, () => {
      for (const [path, version] of adopted) paths.setApplied(path, version);
      // Changes journaled as nothing (adopted, filtered) are never looked at again either.
      if (through > this.#journaledThrough) {
        this.store.setMeta(JOURNALED_META, String(through));
        this.#journaledThrough = through;
      }
      // Last: the journal tells its listeners at once.
      journal.append(planJournalEntries(changes, { seen, deferred, filtered, masterContent }));
    });
  }

  /**
   * The master sequence of the version an apply recorded right under a local change of
   * `path` and has not remembered as applied yet (`ApplyIntents`: noted until the batch's
   * versions are remembered, in the same transaction), else 0. The local change came
   * after that version was on disk (an apply records a version only once it is made,
   * and what someone put there before it makes the change fail instead), so it is
   * journaled as having seen it: what a user puts where the master's removal just took
   * a file away is not a conflict with that removal.
   */
  #appliedUnder(path: string, previous: Iteration | undefined): number {
    if (previous?.origin !== ORIGINS.master) return 0;
    return this.tables.intents.match(path, previous.hash, previous.mode)?.sequence ?? 0;
  }

  /** Stores the applied position. */
  saveApplied(): void {
    if (this.store.db.isOpen) this.store.setMeta(APPLIED_META, String(this.applied));
  }

  /** Whether a full resync was left unfinished (it starts over on the next connection). */
  get resyncPending(): boolean {
    return this.store.getMeta(RESYNC_META) === "1";
  }

  set resyncPending(value: boolean) {
    this.store.setMeta(RESYNC_META, value ? "1" : "0");
  }

  /**
   * Pauses the workspace's watcher while many master versions are applied (a large
   * catch-up, or a large change arriving live): every file applied would come back as an
   * event. Local changes made meanwhile are not overwritten unseen (each apply
   * checks the disk first, but for a write landing between that check and the rename: see
   * `VersionApplier.makeChanges`) and are recorded by the scan that resumes it. A
   * connection lost midway leaves it paused for the next one, which goes on with the
   * catch-up.
   *
   * @param during What is applied meanwhile, for the log.
   * @returns Once paused, after the pauses and resumes asked before it.
   */
  pauseWatching(during = "the catch-up"): Promise<void> {
    return this.#watchTransition(async () => {
      if (!this.workspace.watching) return;
      await this.workspace.suspendWatching();
      log("info", `watching paused while ${during} is applied; a scan follows it`);
    });
  }

  /**
   * Resumes the watcher {@linkcode pauseWatching} paused: once in sync, when the master
   * cannot be reached, or on close; after the pauses and resumes asked before it. The
   * resuming scan runs in the background, its captures in turns of the workspace's queue
   * between the notifications applied. A workspace that is watched, or never was, is left
   * as it is (see `resumeWatching`).
   */
  resumeWatching(): void {
    this.#watchTransition(async () => {
      if (this.workspace.watching) return;
      await this.workspace.resumeWatching();
      if (this.workspace.watching) {
        log("info", "watching resumed; what changed meanwhile is recorded");
      }
    }).catch((error) => log("error", "cannot watch the workspace again", { error }));
  }

  /**
   * Runs pauses and resumes of the watcher one after another, in the order asked: a pause
   * of a burst is asked while a notification is routed, which waits for nothing, so a
   * resume may be asked before it is done (it would find the watcher still on, and leave it
   * paused for good).
   */
  #watchTransition(transition: () => Promise<void>): Promise<void> {
    const done = this.#watchTransitions.then(transition);
    this.#watchTransitions = done.catch(() => {}); // the next one runs all the same
    return done;
  }

  /**
   * Takes large contents (fetched in chunks) that master versions just written replaced out
   * of a sandbox's CAS: like every other content of the master's, they are read through it
   * again when needed (PROTOCOL.md §2). The latest version's chunks stay, so the next small
   * edit to the file is fetched as the few chunks it changes; so does what the replica keeps
   * for reasons of its own (see `contentsKeptHere`), and every chunk another content stored
   * here uses. Runs in the workspace's queue, so no capture storing a content that shares a
   * chunk runs meanwhile. A replica keeping the master's content keeps these too. A process
   * stopped between the record and the removal leaves them (space, not content).
   *
   * @param hashes Contents that master versions just written replaced.
   */
  async dropMasterContents(hashes: readonly string[]): Promise<void> {
    if (this.keepsMasterContent || hashes.length === 0) return;
    try {
      await this.workspace.exclusive(() =>
        this.cas.dropChunked(hashes, (asked) => contentsKeptHere(this.store.db, asked))
      );
    } catch (error) {
      // Only space is at stake: the versions are written and recorded.
      log("warn", "could not remove the master's large contents from the CAS", { error });
    }
  }

  /**
   * Lists a path that could not be applied (the most recent {@linkcode PROBLEMS_KEPT}), each
   * path once, with its latest reason.
   */
  noteProblem(path: string, reason: string): void {
    log("warn", "not applied", { path, reason });
    this.problems = this.problems.filter((problem) => problem.path !== path);
    this.problems.push({ path, reason });
    if (this.problems.length > PROBLEMS_KEPT) this.problems.shift();
  }

  /** Drops the problems of paths a master version was applied to since. */
  clearProblems(applied: Iterable<string>): void {
    if (this.problems.length === 0) return;
    const paths = new Set(applied);
    this.problems = this.problems.filter((problem) => !paths.has(problem.path));
  }
}
