import { CorruptContentError } from "../cas/mod.ts";
import { forEachLimited } from "../concurrency/mod.ts";
import { inTransaction } from "../db/mod.ts";
import { errorMessage, log } from "../log/mod.ts";
import { ancestorsOf, PathError } from "../paths/mod.ts";
import { ChangedOnDiskError, type DiskStamp, isMissing } from "../disk/mod.ts";
import { isFolderMode, type Iteration, ORIGINS } from "../store/mod.ts";
import {
  type CheckedFolders,
  FolderNotEmptyError,
  type Observation,
  observePath,
} from "../workspace/mod.ts";
import { type ApplyAction, decideApply } from "./apply_decision.ts";
import type { ChangeToMake, MadeChanges, PendingVersion } from "./apply_batch.ts";
import { VersionContent } from "./apply_content.ts";
import type { ContentFetcher } from "./content_fetcher.ts";
import { diskMatches, matchingStamp, type SeenStamp } from "./disk_check.ts";
import type { ReplicaPathState } from "./replica_paths.ts";
import type { ReplicaCore } from "./replica_core.ts";
import { byLevel, pathDepth } from "./_path_levels.ts";
import { contentGroups } from "./content_groups.ts";
import { TransportClosedError } from "./transports/mod.ts";

/** Paths whose disk state is checked, and content gathered, at once. */
const APPLY_CONCURRENCY = 16;
/**
 * Attempts made again at a version whose path changed on disk under it, each once the
 * workspace settled and what changed is recorded, before the version is held back until
 * the path settles (see `VersionApplier.#applyAfterLocalChanges`).
 */
const SETTLE_ATTEMPTS = 2;
/**
 * The most bytes of content fetched into memory that a group of changes holds, where
 * the replica keeps no copy of the master's content (see `contentGroups`): a batch holds
 * two groups at most, one written while the next is fetched.
 */
const HELD_CONTENT_BYTES = 8 * 1024 * 1024;

/** What the apply pipeline needs of its connection. */
export interface ApplierContext {
  /** The replica. */
  core: ReplicaCore;
  /** The connection's content fetcher. */
  fetcher: ContentFetcher;
  /** Whether a release of `path` is queued and not run yet (see `ReplicaState.releasing`). */
  releasing(path: string): boolean;
  /** Whether the connection is ending. */
  closing(): boolean;
  /** The master's address, for the error a lost fetch of a release throws. */
  remote: string;
  /**
   * Asks for the versions held back because their paths kept changing on disk to be
   * weighed again later, once (the session backs off while they keep changing).
   */
  retryUnsettled(): void;
}

/**
 * The replica's apply pipeline for one connection: decides each master version
 * (`decideApply`), checks the disk and gathers content many at a time, then writes them
 * all at once through the workspace's executor (`Workspace.applyChanges`) and remembers
 * them as applied. Versions whose content could not be fetched because the connection
 * ended are left in {@linkcode VersionApplier.lostFetches} for the session to carry.
 */
export class VersionApplier {
  readonly #c: ApplierContext;
  readonly #content: VersionContent;
  /** Versions not applied because the connection ended while their content was fetched. */
  lostFetches: PendingVersion[] = [];

  /** @param context See {@linkcode ApplierContext}. */
  constructor(context: ApplierContext) {
    this.#c = context;
    this.#content = new VersionContent({
      ...context,
      lost: (item) => this.lostFetches.push(item),
    });
  }

  /**
   * {@linkcode VersionApplier.release} for each path, shallowest first (a folder restored
   * before what it holds), then for the paths inside each that were held back behind it.
   */
  async releaseAll(released: { path: string; restore: boolean }[]): Promise<void> {
    const { tables } = this.#c.core;
    const sorted = [...released].sort((a, b) => pathDepth(a.path) - pathDepth(b.path));
    const touched: string[] = [];
    let failed = false;
    try {
      for (const { path, restore } of sorted) {
        touched.push(path);
        await this.release(path, restore);
      }
      for (const { path } of sorted) {
        for (const inside of tables.paths.deferredInside(path)) {
          touched.push(inside);
          await this.release(inside, false);
        }
      }
    } catch (error) {
      failed = true;
      throw error;
    } finally {
      // Also when a release failed (its connection ended while it fetched the master's
      // version): those before it may have emptied a kept folder, and once they are
      // released nothing else would look at that folder again.
      await this.#removeEmptiedFolders(touched).catch((error) => {
        if (!failed) throw error;
        log("warn", "could not remove the folders a release emptied", { error });
      });
    }
  }

  /**
   * A folder the master removed was kept while it held what was just released (§8):
   * removed now if that left it empty, deepest first (one still holding something stays).
   * That includes a released folder itself, kept while what it held was released after
   * it (held back behind it, or behind its own write-back).
   *
   * @param touched The paths released (or tried).
   */
  async #removeEmptiedFolders(touched: string[]): Promise<void> {
    const { tables, store } = this.#c.core;
    const folders = new Set(touched.flatMap((path) => [path, ...ancestorsOf(path)]));
    for (const folder of [...folders].sort((a, b) => pathDepth(b) - pathDepth(a))) {
      const { applied, deferred } = tables.paths.get(folder);
      if (applied.sequence === 0 || !applied.deleted || deferred) continue;
      // Only a folder still here: a file's own release has decided it already.
      const local = store.latest(folder);
      if (local && !local.deleted && isFolderMode(local.mode)) await this.release(folder, true);
    }
  }

  /** After write-back answers: apply what was held back, or take the master's version. */
  async release(path: string, restore: boolean): Promise<void> {
    const { journal, paths } = this.#c.core.tables;
    if (journal.hasOpen(path)) return;
    const state = paths.get(path);
    const target = state.deferred ?? (restore ? state.applied : null);
    if (!target) return;
    this.lostFetches = [];
    await this.applyVersions([{ path, version: target, inline: null }]);
    // Kept as deferred: released again once write-backs are answered on a next connection.
    if (this.lostFetches.length > 0) throw new TransportClosedError(this.#c.remote);
  }

  /**
   * Applies master versions of unrelated paths: decide each, check the disk and gather
   * content many at a time, then write them all at once (one store transaction).
   */
  async applyVersions(items: PendingVersion[], attempt = 0): Promise<void> {
    const { core } = this.#c;
    const { tables } = core;
    const toMake: Array<
      PendingVersion & { action: "write" | "remove"; local: Iteration | undefined }
    > = [];
    const held: PendingVersion[] = [];
    const deferred: PendingVersion[] = [];
    const paths = items.map((item) => item.path);
    const locals = core.store.latestOf(paths);
    const states = tables.paths.getMany(paths);
    for (const item of items) {
      // The disk is later compared with this same record: a change recorded meanwhile
      // then shows as a difference, and the version is decided again.
      const local = locals.get(item.path);
      const action = this.#decide(item, local, states.get(item.path)!);
      switch (action) {
        case "skip-filtered":
        case "skip-superseded":
          break;
        case "noop":
          held.push(item);
          break;
        case "defer":
          if (item.version.deleted || await this.#content.hold(item)) deferred.push(item);
          break;
        default:
          toMake.push({ ...item, action, local });
      }
    }
    // Already held here (a resync finds most files so): remembered in one transaction, with
    // the versions deferred behind a local change.
    await this.#remember(held, deferred);
    const changedOnDisk: PendingVersion[] = [];
    // Content fetched into memory (a replica keeping no copy) is held a group at a time,
    // each group's fetched while the one before it is written.
    const groups = contentGroups(
      toMake,
      (item) => this.#content.inMemory(item),
      HELD_CONTENT_BYTES,
    );
    let next: Promise<ChangeToMake[]> | null = groups[0]
      ? this.#gather(groups[0], changedOnDisk)
      : null;
    for (let at = 0; next !== null; at++) {
      const ready = await next;
      next = groups[at + 1] ? this.#gather(groups[at + 1]!, changedOnDisk) : null;
      next?.catch(() => {}); // awaited next round, unless this one throws
      const made = await this.makeChanges(ready);
      // Inline content that did not hash to its version's hash: fetched, then written.
      const fetched: ChangeToMake[] = [];
      await forEachLimited(made.corrupt, APPLY_CONCURRENCY, async (item) => {
        const { path, version: { hash } } = item;
        log("warn", "inline content does not match its hash; fetching it", { path, hash });
        // Fetched as any version that came without its bytes.
        const content = await this.#content.forWrite(item);
        if (content !== null) fetched.push({ ...item, ...content });
      });
      changedOnDisk.push(...made.taken, ...(await this.makeChanges(fetched)).taken);
    }
    if (changedOnDisk.length > 0) await this.#applyAfterLocalChanges(changedOnDisk, attempt);
  }

  /**
   * Checks the disk and gathers the content of changes about to be made, many at a time.
   *
   * @param changedOnDisk Where the versions whose paths changed on disk are put.
   * @returns The changes ready to make (without those whose content is unavailable).
   */
  async #gather(
    items: Array<PendingVersion & { action: "write" | "remove"; local: Iteration | undefined }>,
    changedOnDisk: PendingVersion[],
  ): Promise<ChangeToMake[]> {
    const ready: ChangeToMake[] = [];
    await forEachLimited(items, APPLY_CONCURRENCY, async (item) => {
      // Where nothing is recorded the write itself refuses whatever it finds on disk, with
      // no window between a look and the write (and no look at all for a new path).
      const createOnly = item.action === "write" && (item.local?.deleted ?? true);
      // What is there is checked again right before it is replaced (see ChangeToMake).
      const seen = createOnly
        ? {}
        : await matchingStamp(this.#c.core.workspace.root, item.path, item.local);
      if (seen === false) {
        changedOnDisk.push(item);
      } else if (item.action === "remove" || item.inline !== null) {
        // Inline content is written straight from the notification; the write checks it.
        ready.push({ ...item, createOnly, ...unchangedSince(seen) });
      } else {
        // A fetch that fails with the connection throws: the position must not pass it.
        const content = await this.#content.forWrite(item);
        if (content !== null) {
          ready.push({ ...item, ...content, createOnly, ...unchangedSince(seen) });
        }
      }
    });
    return ready;
  }

  #decide(
    item: PendingVersion,
    local: Iteration | undefined,
    state: ReplicaPathState,
  ): ApplyAction {
    const { filter, tables, mode } = this.#c.core;
    const { path, version } = item;
    // A folder is asked of the filters as a folder (a folder-only pattern, `build/`); a
    // removal as what it removes here.
    const folder = isFolderMode(version.deleted ? local?.mode ?? 0 : version.mode);
    return decideApply({
      version,
      local: local ?? { hash: "", mode: 0, deleted: true },
      state,
      // A local file or folder holding the path, still written back, holds it back too:
      // the master's version of it may replace the one there (released with it). So does
      // one answered whose release has not run yet: the master's answer is read at once,
      // its release waits its turn behind the notifications that came before it.
      pendingWriteBack: [path, ...ancestorsOf(path)].some((held) =>
        tables.journal.hasOpen(held) || this.#c.releasing(held)
      ),
      filtered: filter.toReplica.ignores(path, folder) || filter.local.ignores(path, folder),
      unresolvedConflict: mode === "local-sync" && tables.conflicts.hasUnresolved(path),
    });
  }

  /**
   * Writes and removes on disk, then remembers each version made as applied.
   *
   * @returns How many were made; the create-only writes that found something on disk
   * (left as it is: their versions are for the caller to weigh again); and the writes
   * whose inline content did not match its hash (nothing written: to fetch).
   */
  async makeChanges(items: ChangeToMake[]): Promise<MadeChanges> {
    // Folders created first, shallowest first, then the rest: each level's paths are
    // unrelated (see `followingNotifications`).
    const levels = byLevel(
      items,
      (item) =>
        item.action === "write" && isFolderMode(item.version.mode)
          ? pathDepth(item.path)
          : Infinity,
      "shallowest",
    );
    if (levels.length <= 1) return await this.#makeUnrelatedChanges(items);
    const out: MadeChanges = { made: 0, taken: [], corrupt: [] };
    // One batch: a folder a level found or made is not looked at again as a parent by the
    // levels after it (see `ApplyChangesOptions.checkedFolders`).
    const checkedFolders: CheckedFolders = new Map();
    for (const level of levels) {
      const made = await this.#makeUnrelatedChanges(level, checkedFolders);
      out.made += made.made;
      out.taken.push(...made.taken);
      out.corrupt.push(...made.corrupt);
    }
    return out;
  }

  /**
   * {@linkcode makeChanges} for paths unrelated to each other: one batch of the workspace.
   *
   * @param checkedFolders The folders the batch's earlier levels found (see
   * `ApplyChangesOptions.checkedFolders`).
   */
  async #makeUnrelatedChanges(
    items: ChangeToMake[],
    checkedFolders?: CheckedFolders,
  ): Promise<MadeChanges> {
    if (items.length === 0) return { made: 0, taken: [], corrupt: [] };
    const { core } = this.#c;
    // A local write to a recorded path, landing after the disk check, makes the change
    // fail (ChangedOnDiskError, taken: recorded, then weighed again), not replaced:
    // `unchangedSince` is checked right before the rename (RACE: but for the microseconds
    // between that look and the rename). Create-only writes have no window at all.
    const intent = core.tables.intents.begin(items);
    const { failed } = await core.workspace.applyChanges(
      items.map(({ path, action, version, inline, createOnly, unchangedSince }) =>
        // A folder is removed only when empty: what is left in it (a filtered path, a
        // local file not written back yet) is never lost (PROTOCOL.md §8).
        action === "remove"
          ? {
            path,
            remove: true,
            onlyEmptyFolder: true,
            ...(unchangedSince ? { unchangedSince } : {}),
          }
          : {
            path,
            hash: version.hash,
            mode: version.mode,
            createOnly: createOnly ?? false,
            ...(unchangedSince ? { unchangedSince } : {}),
            ...(inline ? { bytes: inline } : {}),
          }
      ),
      // A replica's files are copies: visible before their fsync (recorded after it).
      // What a local change replaced right after (a file written where one was removed,
      // a folder's mode changed) is not the master's: taken, recorded as local, weighed.
      {
        origin: ORIGINS.master,
        visibleFirst: true,
        onlyOwnChanges: true,
        // Content fetched or inline is the master's: kept here only where asked.
        keepGivenContent: core.keepsMasterContent,
        ...(checkedFolders ? { checkedFolders } : {}),
      },
    );
    const byPath = new Map(items.map((item) => [item.path, item]));
    const out: MadeChanges = { made: items.length - failed.length, taken: [], corrupt: [] };
    const problems = new Map<string, unknown>(); // changes that may have reached the disk
    for (const { path, error } of failed) {
      const item = byPath.get(path)!;
      byPath.delete(path);
      if (error instanceof FolderNotEmptyError) {
        // Kept with what it holds: the version is applied as far as it goes.
        log("info", "folder kept: it holds paths the master did not remove", { path });
        byPath.set(path, item);
      } else if (
        error instanceof Deno.errors.AlreadyExists || error instanceof ChangedOnDiskError ||
        changedAbove(error)
      ) {
        out.taken.push(item); // the disk changed under it: recorded, then weighed again
      } else if (error instanceof CorruptContentError && item.inline !== null) {
        out.corrupt.push(item);
      } else problems.set(path, error);
    }
    inTransaction(core.store.db, () => {
      for (const item of byPath.values()) core.tables.paths.setApplied(item.path, item.version);
      core.tables.intents.end(intent, new Set(problems.keys())); // theirs stay noted
    });
    core.clearProblems(byPath.keys());
    for (const [path, error] of problems) core.noteProblem(path, errorMessage(error));
    // The large contents these versions replaced go: the chunks the new ones share stay
    // (fetched again, never: a small edit to a large file costs a few chunks).
    await core.dropMasterContents(
      [...byPath.values()].flatMap(({ local, version }) =>
        local && !local.deleted && local.hash !== version.hash ? [local.hash] : []
      ),
    );
    return out;
  }

  /**
   * Remembers `held` as applied and holds `deferred` back (`ReplicaPaths.defer`), in one
   * transaction. The deferred contents' files are flushed before anything remembers
   * them; their rows commit in that same transaction (one commit, not two).
   */
  async #remember(held: PendingVersion[], deferred: PendingVersion[]): Promise<void> {
    const { core } = this.#c;
    if (deferred.length > 0) await core.cas.syncDeferred({ keepRowsHeld: true });
    let forgetHeldRows = () => {};
    inTransaction(core.store.db, () => {
      if (deferred.length > 0) forgetHeldRows = core.cas.writeHeldRows();
      for (const item of held) core.tables.paths.setApplied(item.path, item.version);
      for (const item of deferred) core.tables.paths.defer(item.path, item.version);
    });
    forgetHeldRows();
    core.clearProblems(held.map((item) => item.path));
  }

  /**
   * Some files changed on disk without being recorded yet: record them first (they are
   * then journaled and these versions deferred), never overwrite them unseen. A path
   * still changing after {@linkcode SETTLE_ATTEMPTS} more attempts has its version held
   * back like one behind a local change: durably, so the position acknowledged may pass
   * it, and weighed again later (the session's retry of unsettled paths, backing off
   * while they keep changing; or the next connection's release of what is held back),
   * until it is applied or superseded. Never left unapplied. So is one where the disk
   * holds what is never recorded (a named pipe, a socket): it waits until that goes.
   *
   * Only the paths that differ are recorded, not the whole workspace scanned: each retry
   * of a path that never settles (a named pipe stays) would scan it all again.
   */
  async #applyAfterLocalChanges(items: PendingVersion[], attempt: number): Promise<void> {
    const { core } = this.#c;
    const { workspace, store } = core;
    if (attempt >= SETTLE_ATTEMPTS) {
      const deferred: PendingVersion[] = [];
      for (const item of items) {
        // Content unavailable is noted (as for any version); a lost fetch is carried.
        if (item.version.deleted || await this.#content.hold(item)) deferred.push(item);
      }
      // Said once for each version, not at every retry.
      const already = core.tables.paths.getMany(deferred.map((item) => item.path));
      const newly = deferred.filter(({ path, version }) =>
        already.get(path)?.deferred?.sequence !== version.sequence
      );
      await this.#remember([], deferred);
      for (const { path, version } of newly) this.#sayHeldBack(path, version.sequence);
      if (deferred.length > 0) this.#c.retryUnsettled();
      return;
    }
    await workspace.settled();
    const differing: string[] = [];
    for (const item of items) {
      if (!(await diskMatches(workspace.root, item.path, store.latest(item.path)))) {
        differing.push(item.path);
      }
    }
    if (differing.length > 0) await workspace.capture(differing);
    await this.applyVersions(items, attempt + 1);
  }

  /** Says why the master's version of `path` is held back: a special file, or changes. */
  #sayHeldBack(path: string, sequence: number): void {
    let found: Observation | null = null;
    try {
      found = observePath(this.#c.core.workspace.root, path);
    } catch { /* unreadable: said as a change */ }
    if (found?.kind === "other") {
      this.#c.core.noteProblem(
        path,
        `${found.what} is there, which is never recorded: the master's version waits until it goes`,
      );
      return;
    }
    log("info", "the path keeps changing on disk; the master's version waits until it settles", {
      path,
      sequence,
    });
  }
}

/** The `unchangedSince` of a change made over what was seen (nothing for a folder or nothing). */
function unchangedSince(seen: SeenStamp): { unchangedSince?: DiskStamp } {
  return seen.stamp ? { unchangedSince: seen.stamp } : {};
}

/**
 * Whether a write failed because a local change took its folder away meanwhile (removed,
 * or replaced by a file or a link, not recorded yet): not the version's problem.
 */
function changedAbove(error: unknown): boolean {
  return error instanceof PathError || isMissing(error);
}
