/**
 * The master's side of a write-back rename or mode change, once accepted: made through
 * the workspace, with what it may leave on disk noted first. Internal to
 * `lib/replication` (see `WriteBackApplier`).
 *
 * @module
 */
import type { Iteration, Store } from "../store/mod.ts";
import { maskMode, type MoveOptions, type Workspace } from "../workspace/mod.ts";
import type { WriteBackEntry } from "../wire/mod.ts";
import type { SeenStamp } from "./disk_check.ts";
import type { AppliedContent, MasterState } from "./master_state.ts";
import { chmodded, fullMode, moveStamps, renameStates, stateOf } from "./writeback_outcomes.ts";

/** What a rename or mode change is made with. */
export interface MoveContext {
  workspace: Workspace;
  store: Store;
  state: MasterState;
  /** Permission bits a write-back may set (see `WriteBackApplierOptions`). */
  allowedModeBits: number;
}

/**
 * Applies an accepted rename or mode change; returns the master sequence it became. A
 * rename moves and replaces only what was `seen` when it was decided.
 *
 * @throws {ChangedOnDiskError} When either path changed on disk since.
 */
export async function renameOrChmod(
  context: MoveContext,
  sandboxId: string,
  entry: WriteBackEntry,
  paths: string[],
  seen: Map<string, SeenStamp | false>,
): Promise<number> {
  const { workspace, store } = context;
  const origin = { origin: sandboxId };
  const mode = fullMode(maskMode(Number(entry.permissions), context.allowedModeBits));
  const path = paths[0]!;
  let recorded: (Iteration | undefined)[];
  switch (entry.operation.type) {
    case "Rename": {
      const target = paths[1]!;
      noteStates(context, sandboxId, entry, renameStates(store.latest(path), target, mode));
      recorded = await moveUnlessMoved(context, path, target, {
        ...origin,
        ...moveStamps(path, target, seen, store.latest(target)),
      });
      const moved = store.latest(target);
      if (moved && !moved.deleted && (moved.mode & 0o7777) !== (mode & 0o7777)) {
        recorded.push(await workspace.chmod(target, mode, origin));
      }
      break;
    }
    case "Chmod": {
      const latest = store.latest(path);
      if (latest && !latest.deleted) {
        noteStates(context, sandboxId, entry, [{
          ...stateOf(latest),
          mode: chmodded(latest, mode),
        }]);
      }
      recorded = [await workspace.chmod(path, mode, origin)];
      break;
    }
    default: // writes and deletions always go in runs (see WriteBackApplier)
      throw new Error(`a ${entry.operation.type} entry is applied in a run`);
  }
  const sequences = recorded.filter((it) => it !== undefined).map((it) => it.sequence);
  if (sequences.length > 0) return Math.max(...sequences);
  // Nothing changed (the master already held exactly this): answer with the latest.
  return Math.max(0, ...paths.map((p) => store.latest(p)?.sequence ?? 0));
}

/** Notes what an entry may leave on disk before it is made (see `MasterState.noteApplying`). */
function noteStates(
  { state }: MoveContext,
  sandboxId: string,
  entry: WriteBackEntry,
  states: AppliedContent[],
): void {
  state.noteApplying(sandboxId, states.map((one) => ({ localSeq: entry.local_seq, ...one })));
}

/**
 * Moves `source` to `target`, unless that move was made already: by this entry, on a
 * master killed before it stored the outcome (the decision let the entry through, so
 * whatever changed both paths since the sandbox saw them was this entry or the sandbox).
 */
async function moveUnlessMoved(
  { workspace, store }: MoveContext,
  source: string,
  target: string,
  options: MoveOptions,
): Promise<(Iteration | undefined)[]> {
  try {
    return await workspace.move(source, target, options);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound) || !wasMoved(store, source, target)) throw error;
    return [];
  }
}

/** Whether `source` is recorded gone and `target` holds the content `source` last had. */
function wasMoved(store: Store, source: string, target: string): boolean {
  const gone = store.latest(source);
  const content = store.history(source).findLast((iteration) => !iteration.deleted);
  const there = store.latest(target);
  return gone?.deleted === true && content !== undefined && there !== undefined &&
    !there.deleted && there.hash === content.hash;
}
