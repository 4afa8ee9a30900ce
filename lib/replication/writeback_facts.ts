import { type Cas, isContentHash, sha256Hex } from "../cas/mod.ts";
import type { DirectionalFilter } from "../filter/mod.ts";
import { isFolderMode, isSameState, type Store } from "../store/mod.ts";
import type { WriteBackEntry } from "../wire/mod.ts";
import { maskMode } from "../workspace/mod.ts";
import type { AppliedContent, MasterState } from "./master_state.ts";
import { fullMode } from "./writeback_outcomes.ts";
import {
  decideWriteBack,
  entryPaths,
  type WriteBackFacts,
  type WriteBackVerdict,
} from "./write_back_decision.ts";

/** What the master reads to decide a write-back entry. */
export interface WriteBackFactSources {
  /** The workspace's data folder, relative to its root when inside it (entries there are refused). */
  dataDir: string | undefined;
  /** The master's store: each path's history since the sandbox saw it. */
  store: Store;
  /** The master's CAS: whether content an entry refers to is already there. */
  cas: Cas;
  /** The master's filters; `toMaster` and `local` reject entries as `filtered`. */
  filter: DirectionalFilter;
  /** What an entry being applied before noted it may leave on disk. */
  state: MasterState;
  /** Largest content a write-back may carry. */
  maxContentBytes: number;
  /** The permission bits a write-back may set (see `maskMode`). */
  allowedModeBits: number;
}

/**
 * Gathers the facts {@linkcode decideWriteBack} needs for one entry and decides it.
 *
 * @param sources Where the facts are read.
 * @param sandboxId The sending replica.
 * @param entry The entry.
 * @param options `contentArriving`: its content is on its way in pieces (see
 * `writeback_pieces.ts`), judged as if it were stored.
 * @returns The verdict.
 */
export async function judgeWriteBack(
  sources: WriteBackFactSources,
  sandboxId: string,
  entry: WriteBackEntry,
  options: { contentArriving?: boolean } = {},
): Promise<WriteBackVerdict> {
  const { dataDir, store, filter, state } = sources;
  const located = entryPaths(entry, dataDir);
  const facts: WriteBackFacts = {
    sandboxId,
    dataDir,
    maxContentBytes: sources.maxContentBytes,
    content: options.contentArriving ? "stored" : await contentState(sources, entry),
    paths: {},
  };
  if ("paths" in located) {
    const seen = Number(entry.master_rowid_seen);
    // Noted when this entry was being applied before: what a restart recorded of it.
    // Looked up only where someone else changed a path since (rarely).
    let own: AppliedContent[] | undefined;
    const ownStates = () => own ??= state.applying(sandboxId, entry.local_seq);
    // A removal, or a file written where a folder is: both must find that folder empty.
    const replacing = entry.operation.type === "Write" &&
      !isFolderMode(Number(entry.permissions));
    const holding = entry.operation.type === "Delete" || replacing
      ? store.withLiveInside(located.paths)
      : new Set<string>();
    const leaves = stateLeft(entry, sources.allowedModeBits);
    for (const path of located.paths) {
      // A folder is asked of the filters as a folder (a folder-only pattern, `build/`): a
      // write of a folder's mode, or a removal or rename of what the master holds as one.
      // The master's record is looked up only where it is needed.
      const written = entry.operation.type === "Write" || entry.operation.type === "Chmod";
      const latest = !written || leaves !== null ? store.latest(path) : undefined;
      const folder = written
        ? isFolderMode(Number(entry.permissions))
        : latest !== undefined && !latest.deleted && isFolderMode(latest.mode);
      facts.paths[path] = {
        filtered: filter.toMaster.ignores(path, folder) || filter.local.ignores(path, folder),
        later: laterIterations(store, path, seen, sandboxId, ownStates),
        holdsLive: holding.has(path),
        alreadyHeld: leaves !== null && isSameState(latest, leaves),
      };
    }
  }
  return decideWriteBack(entry, facts);
}

/** The state a `Write` or `Delete` leaves at its path; `null` for other operations. */
function stateLeft(
  entry: WriteBackEntry,
  allowedModeBits: number,
): Pick<AppliedContent, "hash" | "mode" | "deleted"> | null {
  if (entry.operation.type === "Delete") return { hash: "", mode: 0, deleted: true };
  if (entry.operation.type !== "Write" || entry.content_hash === null) return null;
  const mode = fullMode(maskMode(Number(entry.permissions), allowedModeBits));
  return { hash: entry.content_hash, mode, deleted: false };
}

/**
 * The iterations of `path` after `seen`, but those in a state this entry leaves there,
 * noted when it was being applied before (`own`): its own result, recorded as the
 * agent's by a master killed before it recorded the entry, never a conflict with it.
 */
function laterIterations(
  store: Store,
  path: string,
  seen: number,
  sandboxId: string,
  own: () => AppliedContent[],
): { sequence: number; origin: string }[] {
  let later = store.history(path, { afterSequence: seen });
  if (later.some((iteration) => iteration.origin !== sandboxId)) {
    const states = own().filter((state) => state.path === path);
    later = later.filter((iteration) => !states.some((state) => isSameState(iteration, state)));
  }
  return later.map(({ sequence, origin }) => ({ sequence, origin }));
}

async function contentState(
  sources: WriteBackFactSources,
  entry: WriteBackEntry,
): Promise<WriteBackFacts["content"]> {
  if (entry.operation.type !== "Write" || entry.content_hash === null) return "missing";
  if (!isContentHash(entry.content_hash)) return "mismatch";
  if (entry.content_bytes !== null) {
    if (entry.content_bytes.length > sources.maxContentBytes) return "verified"; // refused as too large
    return sha256Hex(entry.content_bytes) === entry.content_hash ? "verified" : "mismatch";
  }
  return await sources.cas.has(entry.content_hash) ? "stored" : "missing";
}
