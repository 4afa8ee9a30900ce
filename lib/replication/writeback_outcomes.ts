import { type Cas, sha256Hex } from "../cas/mod.ts";
import { type Iteration, S_IFMT, S_IFREG } from "../store/mod.ts";
import {
  ChangedOnDiskError,
  FolderNotEmptyError,
  ForbiddenWriteError,
  type MoveOptions,
  type WorkspaceChange,
} from "../workspace/mod.ts";
import type { WriteBackEntry } from "../wire/mod.ts";
import { isMissing } from "../disk/mod.ts";
import { errorMessage, log } from "../log/mod.ts";
import { metrics } from "../metrics/mod.ts";
import { parentOf, PathError } from "../paths/mod.ts";
import type { SeenStamp } from "./disk_check.ts";
import type { MasterConflicts } from "./master_conflicts.ts";
import type { AppliedContent, WriteBackOutcome } from "./master_state.ts";
import { reasonWord, type WriteBackVerdict } from "./write_back_decision.ts";

/** What became of a batch. */
export interface WriteBackBatchResult {
  /** `[local_seq, master sequence]` pairs. */
  accepted: [bigint, bigint][];
  /** `[local_seq, reason]` pairs. */
  rejected: [bigint, string][];
  /** Set when an entry was hostile (a path leaving the workspace): close the connection. */
  disconnect: string | null;
}

/**
 * Keeps a newly rejected entry on the master (`chronicle conflicts`, `GET /conflicts`):
 * its content, when it came along and hashed right, goes into the CAS. Entries refused
 * as malformed (`invalid path`, `invalid content`, `too large`) are not kept, only logged:
 * there is nothing trustworthy to keep.
 *
 * @param keeper Where the content and the conflict are kept.
 * @param sandboxId The sending replica.
 * @param entry The entry.
 * @param outcome What was decided for it.
 */
export async function keepRejected(
  keeper: { cas: Cas; conflicts: MasterConflicts },
  sandboxId: string,
  entry: WriteBackEntry,
  outcome: WriteBackOutcome,
): Promise<void> {
  if (outcome.accepted) return;
  if (!KEPT_REASONS.has(reasonWord(outcome.reason))) {
    // Listed on the sandbox only: said here, for whoever set the master's limits.
    log("warn", "write-back refused", { sandboxId, path: entry.filepath, reason: outcome.reason });
    return;
  }
  let keptHash: string | null = null;
  const bytes = entry.content_bytes;
  try {
    if (entry.operation.type === "Write" && entry.content_hash !== null) {
      if (bytes !== null && sha256Hex(bytes) === entry.content_hash) {
        keptHash = (await keeper.cas.putBytes(bytes)).hash;
      } else if (bytes === null && await keeper.cas.has(entry.content_hash)) {
        keptHash = entry.content_hash;
      }
    }
    keeper.conflicts.add({
      sandboxId,
      localSeq: Number(entry.local_seq),
      path: entry.filepath,
      operation: entry.operation.type.toLowerCase(),
      reason: outcome.reason,
      keptHash,
      keptSize: keptHash === null ? 0 : Number(entry.size),
      keptMode: Number(entry.permissions),
    });
  } catch (error) {
    // The answer stands; only the master's copy is missing (the replica keeps its own).
    log("warn", "could not keep a rejected write-back", {
      sandboxId,
      path: entry.filepath,
      error,
    });
  }
}

/**
 * What a rename of `source` to `target` may leave on disk: the source gone, and the
 * target with its content, in its mode before and after the entry's mode is set. Nothing
 * when the source is no longer live (the rename is then made already, or impossible).
 */
export function renameStates(
  source: Iteration | undefined,
  target: string,
  mode: number,
): AppliedContent[] {
  if (!source || source.deleted) return [];
  const moved = { ...stateOf(source), path: target };
  return [
    { path: source.path, hash: "", mode: 0, deleted: true },
    moved,
    { ...moved, mode: chmodded(source, mode) },
  ];
}

/** What `iteration` holds at its path. */
export function stateOf({ path, hash, mode, deleted }: Iteration): AppliedContent {
  return { path, hash, mode, deleted };
}

/** The full mode `iteration`'s file has once its permission bits are `mode`'s. */
export function chmodded(iteration: Iteration, mode: number): number {
  return (iteration.mode & ~0o7777) | (mode & 0o7777);
}

/** Counts a newly decided entry in `/metrics` (entries answered again from the record are not). */
export function countDecided(outcome: WriteBackOutcome): void {
  metrics.writebacks.inc({ result: outcome.accepted ? "accepted" : "rejected" });
  if (!outcome.accepted && reasonWord(outcome.reason) === "conflict") metrics.conflicts.inc();
}

/** Adds an entry's outcome to the batch's answer. */
export function report(
  result: WriteBackBatchResult,
  entry: WriteBackEntry,
  outcome: WriteBackOutcome,
): void {
  if (outcome.accepted) result.accepted.push([entry.local_seq, BigInt(outcome.masterSeq)]);
  else result.rejected.push([entry.local_seq, outcome.reason]);
}

/**
 * The highest sequence recorded for each change: a folder's removal records its files'
 * deletions. The changes' paths are unrelated, so each iteration belongs to one of them.
 */
export function sequencesByChange(
  changes: WorkspaceChange[],
  recorded: Iteration[],
): Map<string, number> {
  const paths = new Set(changes.map((change) => change.path));
  const out = new Map<string, number>();
  for (const { path, sequence } of recorded) {
    let owner = path;
    while (!paths.has(owner) && owner.includes("/")) owner = parentOf(owner);
    out.set(owner, Math.max(out.get(owner) ?? 0, sequence));
  }
  return out;
}

/** Every path the accepted verdicts touch. */
export function acceptedPaths(verdicts: WriteBackVerdict[]): string[] {
  return verdicts.flatMap((verdict) => verdict.accept ? verdict.paths : []);
}

/** What a write or removal leaves at its path. */
export function contentOf(change: WorkspaceChange): AppliedContent {
  if ("remove" in change) return { path: change.path, hash: "", mode: 0, deleted: true };
  return { path: change.path, hash: change.hash, mode: change.mode, deleted: false };
}

/**
 * The wire reason for an accepted entry the workspace refused or failed to make. The
 * reason goes to the sandbox: the master's own folder is left out of the paths the
 * system's message names (`rename 'a.bin' -> 'b.bin'`, not under `/home/agent/…`).
 *
 * @param error What the workspace threw.
 * @param root The master's workspace folder (absolute).
 */
export function failedReason(error: unknown, root: string): string {
  if (error instanceof ForbiddenWriteError) return `forbidden: ${error.message}`;
  if (error instanceof PathError) return `invalid path: ${error.message}`;
  return `failed: ${errorMessage(error).replaceAll(`${root}/`, "")}`;
}

/** The rejections the master keeps (see {@linkcode keepRejected}). */
const KEPT_REASONS = new Set(["conflict", "forbidden", "filtered", "failed"]);

/** A write-back's mode as a full `st_mode`: a regular file when it carries no file type. */
export function fullMode(mode: number): number {
  return (mode & S_IFMT) === 0 ? S_IFREG | (mode & 0o7777) : mode;
}

/**
 * Whether a write-back's change failed because the master's disk changed after the look
 * that decided it: that change is to be recorded, and the entry decided again.
 */
export function changedOnDisk(error: unknown): boolean {
  // A folder to remove that someone filled, or a folder on the way someone removed, too:
  // decided again, they are conflicts, which a sandbox undoes (a failure it keeps).
  return error instanceof ChangedOnDiskError || error instanceof Deno.errors.AlreadyExists ||
    error instanceof FolderNotEmptyError || isMissing(error);
}

/**
 * What an accepted rename may move and replace: what was seen at each path when it was
 * decided, and nothing at a target recorded absent.
 *
 * @throws {ChangedOnDiskError} When a path differed from its record even then.
 */
export function moveStamps(
  source: string,
  target: string,
  seen: Map<string, SeenStamp | false>,
  targetLatest: Iteration | undefined,
): Pick<MoveOptions, "sourceUnchangedSince" | "targetUnchangedSince"> {
  const from = seen.get(source);
  const to = seen.get(target);
  if (from === false || from === undefined) throw new ChangedOnDiskError(source);
  if (to === false || to === undefined) throw new ChangedOnDiskError(target);
  const absent = targetLatest === undefined || targetLatest.deleted;
  return {
    ...(from.stamp ? { sourceUnchangedSince: from.stamp } : {}),
    ...(to.stamp
      ? { targetUnchangedSince: to.stamp }
      : absent
      ? { targetUnchangedSince: null }
      : {}),
  };
}
