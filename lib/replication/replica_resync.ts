import { ancestorsOf } from "../paths/mod.ts";
import { isFolderMode } from "../store/mod.ts";
import { APPLY_BATCH, type ChangeToMake } from "./apply_batch.ts";
import type { VersionApplier } from "./replica_apply.ts";
import type { ReplicaCore } from "./replica_core.ts";
import { byLevel, pathDepth } from "./_path_levels.ts";

/** A path recorded here, as the sweep weighs it. */
export interface LivePath {
  /** The path. */
  path: string;
  /** Its mode (a folder's is a folder mode). */
  mode: number;
}

/**
 * What a finished resync removes (PROTOCOL.md §4, §8): every path recorded here that
 * `keep` does not keep, in batches of unrelated paths to remove in turn: files first,
 * then folders deepest first, a level at a time; a folder holding a path kept stays.
 * Pure.
 *
 * @param live The paths recorded here.
 * @param keep Whether a path stays (the master mentioned it, it is filtered, or waits
 * for write-back).
 * @returns The batches, in order; each lists paths unrelated to each other.
 */
export function resyncRemovals(
  live: readonly LivePath[],
  keep: (path: string, folder: boolean) => boolean,
): { path: string; folder: boolean }[][] {
  const entries = live.map(({ path, mode }) => ({ path, folder: isFolderMode(mode) }));
  const holding = new Set<string>(); // folders holding a path kept here
  for (const { path, folder } of entries) {
    if (keep(path, folder)) {
      for (const a of ancestorsOf(path)) holding.add(a);
    }
  }
  const gone = entries.filter(({ path, folder }) => !keep(path, folder));
  return [
    gone.filter((item) => !item.folder),
    ...byLevel(
      gone.filter((item) => item.folder && !holding.has(item.path)),
      (folder) => pathDepth(folder.path),
      "deepest",
    ),
  ];
}

/**
 * A reconciliation from scratch on one connection: remembers the paths the master
 * mentions since it began, and once the master's sequence is reached removes the local
 * paths it no longer has, except filtered paths and local changes still waiting for
 * write-back.
 */
export class ResyncSweep {
  readonly #core: ReplicaCore;
  /** Paths the master mentioned since the reconciliation began. */
  #seen = new Set<string>();

  /** @param core The replica. */
  constructor(core: ReplicaCore) {
    this.#core = core;
  }

  /** Starts over: nothing mentioned yet. */
  reset(): void {
    this.#seen = new Set();
  }

  /** Remembers a path the master mentioned. */
  saw(path: string): void {
    this.#seen.add(path);
  }

  /**
   * Removes what the master no longer has, the resync having reached `sequence`.
   *
   * @returns How many paths were removed.
   */
  async sweep(sequence: number, applier: VersionApplier): Promise<number> {
    const core = this.#core;
    const seen = this.#seen;
    const { journal, paths } = core.tables;
    // A local change the master accepted after `sequence`: the master holds it, and its
    // notification of it is still on the way (it comes after what the resync reached).
    const acceptedLater = paths.acceptedAfter(sequence);
    const keep = (path: string, folder: boolean) =>
      seen.has(path) || journal.hasOpen(path) || acceptedLater.has(path) ||
      core.filter.toReplica.ignores(path, folder) || core.filter.local.ignores(path, folder);
    const version = { sequence, hash: "", mode: 0, deleted: true };
    let removed = 0;
    for (const batch of resyncRemovals(core.store.list(), keep)) {
      const changes: ChangeToMake[] = batch.map(({ path }) => ({
        path,
        version,
        inline: null,
        action: "remove",
      }));
      for (let at = 0; at < changes.length; at += APPLY_BATCH) {
        removed += (await applier.makeChanges(changes.slice(at, at + APPLY_BATCH))).made;
      }
    }
    return removed;
  }
}
