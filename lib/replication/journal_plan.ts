import { ancestorsOf } from "../paths/mod.ts";
import { isFolderMode, type Iteration } from "../store/mod.ts";
import type { NewJournalEntry } from "./write_journal.ts";

/** A local change the replica's capture recorded, with the iteration it replaced. */
export interface CapturedChange {
  /** The new iteration. */
  current: Iteration;
  /** The path's iteration before it, if any. */
  previous: Iteration | undefined;
}

/** What {@linkcode planJournalEntries} needs to know about the paths involved. */
export interface JournalPlanContext {
  /** Per path: the master sequence of its latest master version applied here (0 if none). */
  seen: ReadonlyMap<string, number>;
  /** Paths holding a deferred (not yet applied) master version. */
  deferred: ReadonlySet<string>;
  /** Paths the replica-to-master filter excludes. */
  filtered: ReadonlySet<string>;
  /**
   * Per path: the content hash of the master's version applied here, where it is a file
   * (not for a removal or a folder). A rename moves what the master holds: only the
   * removal of that content pairs with a creation as one.
   */
  masterContent: ReadonlyMap<string, string>;
}

/**
 * Turns a batch of captured local changes into journal entries: a changed content is a
 * `write`, a changed mode alone a `chmod`, a removal a `delete`, and a removal paired
 * with a creation of the same content in the same batch a `rename` (an empty file is a
 * `write`, never a rename's target). Filtered paths and changes that change nothing are
 * left out. Pure.
 *
 * Only a removal of the content the master holds at that path (`masterContent`) is a
 * rename's source: the master moves its own file. A file whose last write the master
 * refused (too large, say), or has not recorded yet, is a `delete` and a `write` of the
 * new path: as a rename, the master moved its older version there, which then came back
 * over the file the sandbox had moved.
 *
 * Nor is a removal of a path the batch leaves holding something (made again later in it: a
 * folder emptied and filled again, `rm -rf node_modules` then `npm install`, around a
 * replica's restart): nothing moved from that path. Paired, its removal and its creation
 * were a rename onto itself, which the master refuses; two paths of one content were each
 * other's renames, and the master, moving one onto the other and back, lost one of them.
 * A folder made again is not removed at all: its removal, after the files made again in
 * it, was refused (the folder holds them), a conflict for nothing.
 *
 * A folder (PROTOCOL.md §8) is a `write` of its mode, a `chmod` or a `delete`, never one
 * side of a rename (a moved folder is its files' renames, the new folder's creation and
 * the old one's removal); folder removals come after every other entry of the batch,
 * children first, so that the files moved out of a folder have left it when it goes;
 * a write of a path that held a removed folder (a file replacing a folder tree), or of the
 * removed folder's own path, after them.
 *
 * `master_rowid_seen` is the path's applied master sequence; for a rename it is the
 * larger of the two paths' (every master change of either path up to it was applied, as
 * notifications apply in order), or, when a path holds a deferred master version (which
 * the replica has not applied), that path's (the smaller of the two when both do).
 *
 * @param changes The batch, in recording order.
 * @param context Per-path facts.
 * @returns The entries, in recording order.
 *
 * @example A move is journaled as one rename
 * ```ts
 * import { planJournalEntries } from "./journal_plan.ts";
 * const it = (path: string, deleted: boolean, sequence: number) => ({
 *   path, iteration: 1, sequence, timestamp: 0, size: 1, hash: deleted ? "" : "h",
 *   mode: deleted ? 0 : 0o100644, deleted, origin: "local",
 * });
 * const entries = planJournalEntries([
 *   { current: it("a", true, 3), previous: it("a", false, 1) },
 *   { current: it("b", false, 4), previous: undefined },
 * ], {
 *   seen: new Map(),
 *   deferred: new Set(),
 *   filtered: new Set(),
 *   masterContent: new Map([["a", "h"]]), // the master holds that content at "a"
 * });
 * if (entries.length !== 1 || entries[0]!.operation !== "rename") throw new Error("no rename");
 * ```
 */
export function planJournalEntries(
  changes: CapturedChange[],
  context: JournalPlanContext,
): NewJournalEntry[] {
  const seen = (path: string) => context.seen.get(path) ?? 0;
  const deletions: CapturedChange[] = [];
  const creations: CapturedChange[] = [];
  const planned: NewJournalEntry[] = [];
  const folderRemovals = new Set<string>();
  const replacedFolders = new Set<string>(); // folders replaced by a file or a link
  // What the batch leaves at each path it changes: a mode, or nothing.
  const modeAtEnd = new Map<string, number>();
  for (const { current } of changes) {
    if (current.deleted) modeAtEnd.delete(current.path);
    else modeAtEnd.set(current.path, current.mode);
  }
  for (const change of changes) {
    const { current, previous } = change;
    if (context.filtered.has(current.path)) continue;
    const wasLive = previous !== undefined && !previous.deleted;
    if (current.deleted) {
      if (!wasLive) continue;
      if (isFolderMode(previous.mode)) {
        // A folder made again: it stays (its creation is a write of its mode).
        if (isFolderMode(modeAtEnd.get(current.path) ?? 0)) continue;
        folderRemovals.add(current.path);
      }
      deletions.push(change);
      continue;
    }
    // Same content and type: a mode change (an empty file replacing a folder is a write).
    if (
      wasLive && previous.hash === current.hash &&
      isFolderMode(previous.mode) === isFolderMode(current.mode)
    ) {
      if (previous.mode !== current.mode) {
        planned.push(journalEntryOf(current, "chmod", seen(current.path)));
      }
      continue;
    }
    if (wasLive && isFolderMode(previous.mode) && !isFolderMode(current.mode)) {
      replacedFolders.add(current.path);
    }
    if (wasLive) planned.push(journalEntryOf(current, "write", seen(current.path)));
    else creations.push(change);
  }
  // Pair each removal with a creation of the same content: a rename.
  const unpaired = new Set(creations);
  const creationsByHash = new Map<string, CapturedChange[]>();
  for (const creation of creations) {
    if (isFolderMode(creation.current.mode)) continue; // written, never a rename's target
    // Nor an empty file: its content says nothing of where it came from, and a file being
    // written is empty at first. Taken for a rename's target, a rejected rename (undone)
    // would remove it while its writer goes on writing, into a file no longer there.
    if (creation.current.size === 0) continue;
    const same = creationsByHash.get(creation.current.hash);
    if (same) same.push(creation);
    else creationsByHash.set(creation.current.hash, [creation]);
  }
  for (const removal of deletions) {
    const hash = removal.previous!.hash;
    const movable = !isFolderMode(removal.previous!.mode) &&
      context.masterContent.get(removal.current.path) === hash &&
      !modeAtEnd.has(removal.current.path);
    // The earliest, as a scan would pair.
    const target = movable ? creationsByHash.get(hash)?.shift() : undefined;
    if (!target) {
      planned.push(journalEntryOf(removal.current, "delete", seen(removal.current.path)));
      continue;
    }
    unpaired.delete(target);
    const from = removal.current.path;
    const to = target.current.path;
    const both = [seen(from), seen(to)];
    // Below a deferred version's path's own seen: that version is not applied. Not below
    // the other's: a new target's 0 would make every past change of the source a conflict.
    const deferredSeen = [from, to].filter((path) => context.deferred.has(path)).map(seen);
    planned.push({
      sourceSeq: Math.max(removal.current.sequence, target.current.sequence),
      path: from,
      operation: "rename",
      newPath: to,
      hash,
      size: target.current.size,
      mode: target.current.mode,
      deleted: false,
      masterSeen: deferredSeen.length > 0 ? Math.min(...deferredSeen) : Math.max(...both),
    });
  }
  for (const creation of unpaired) {
    planned.push(journalEntryOf(creation.current, "write", seen(creation.current.path)));
  }
  // Folder removals after the rest, but before a write of a path holding a removed folder
  // or of a folder replaced by a file, its removal seen or not (a file that replaced a
  // folder tree goes once that tree is gone, even what of it was renamed out and captured
  // after the file).
  const holdingRemoved = new Set([...folderRemovals].flatMap((path) => ancestorsOf(path)));
  const rank = (entry: NewJournalEntry) =>
    entry.operation === "delete" && folderRemovals.has(entry.path)
      ? 1
      : entry.operation === "write" &&
          (holdingRemoved.has(entry.path) || replacedFolders.has(entry.path) ||
            folderRemovals.has(entry.path))
      ? 2
      : 0;
  return planned.sort((a, b) => rank(a) - rank(b) || a.sourceSeq - b.sourceSeq);
}

/** The journal entry of one local iteration: a write, a mode change or a deletion. */
export function journalEntryOf(
  current: Iteration,
  operation: "write" | "chmod" | "delete",
  masterSeen: number,
): NewJournalEntry {
  const deleted = operation === "delete";
  return {
    sourceSeq: current.sequence,
    path: current.path,
    operation,
    newPath: null,
    hash: deleted ? null : current.hash,
    size: deleted ? 0 : current.size,
    mode: deleted ? 0 : current.mode,
    deleted,
    masterSeen,
  };
}
