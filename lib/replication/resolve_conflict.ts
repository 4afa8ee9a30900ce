import type { Cas } from "../cas/mod.ts";
import { hasConflictMarkers, threeWayMerge } from "../localsync/mod.ts";
import type { Iteration, Store } from "../store/mod.ts";
import type { Workspace } from "../workspace/mod.ts";
import type { ReplicaTables } from "./replica_tables.ts";
import type { MasterVersion } from "./replica_paths.ts";

/** How a person settles a local-sync conflict. */
export type ConflictChoice = "local" | "upstream" | "merged";

/** What {@linkcode resolveConflict} did. */
export interface ResolveOutcome {
  path: string;
  keep: ConflictChoice;
  /** `resolved`, or `merging` when a merge left conflict markers for the person to edit. */
  state: "resolved" | "merging";
  message: string;
}

/** A resolution that cannot be done as asked; the message says why. */
export class ResolveError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ResolveError";
  }
}

/** What resolution needs of a replica. */
export interface ResolveContext {
  workspace: Workspace;
  store: Store;
  cas: Cas;
  tables: ReplicaTables;
}

/**
 * Origin of a merged file that still holds conflict markers: written for the person to
 * edit, never journaled for write-back (only the settled file is).
 */
export const MERGE_ORIGIN = "local-sync-merge";

/**
 * Settles the open conflicts of `path` on a local-sync replica (seed 004, PROTOCOL.md §6):
 *
 * - `upstream`: the master's version replaces the local file (which stays in history);
 * - `local`: the file as the person has it is written back over the master's version;
 * - `merged`: a three-way merge of the common base, the local file and the master's
 *   version. A clean merge is written and written back; one with overlapping changes is
 *   written with conflict markers and the conflict stays open (`merging`) until the
 *   person edits the markers away and resolves again (`--keep merged` or `--keep local`).
 *
 * @throws {ResolveError} When the path has no open conflict, or a merge is impossible.
 */
export async function resolveConflict(
  context: ResolveContext,
  path: string,
  keep: ConflictChoice,
): Promise<ResolveOutcome> {
  const { workspace, tables } = context;
  const normalized = workspace.checkPath(path);
  const open = tables.conflicts.list({ unresolved: true }).filter((conflict) =>
    conflict.path === normalized
  );
  if (open.length === 0) throw new ResolveError(`No open conflict for "${normalized}"`);
  await workspace.settled();
  await answered(tables, normalized);
  const state = tables.paths.get(normalized);
  const upstream = state.deferred ?? state.applied;
  const close = (resolution: string) =>
    open.forEach((conflict) => tables.conflicts.resolve(conflict.id, resolution));
  if (keep === "upstream") {
    await writeVersion(context, normalized, upstream);
    tables.paths.setApplied(normalized, upstream);
    close("upstream");
    return done(normalized, keep, "resolved", `took the master's version of ${normalized}`);
  }
  if (keep === "merged" && !open.some((conflict) => conflict.resolution === "merging")) {
    const merged = await mergeVersions(context, normalized, state.applied, upstream);
    if (merged.kind === "conflicted") {
      await workspace.writeBytes(normalized, merged.bytes, { origin: MERGE_ORIGIN });
      open.forEach((conflict) => tables.conflicts.note(conflict.id, "merging"));
      return done(
        normalized,
        keep,
        "merging",
        `wrote ${normalized} with conflict markers: edit it, then run sync resolve ${normalized} --keep merged`,
      );
    }
    await workspace.writeBytes(normalized, merged.bytes, { origin: MERGE_ORIGIN });
  } else if (keep === "merged") {
    const current = context.store.latest(normalized);
    if (
      current && !current.deleted && hasConflictMarkers(await context.cas.readBytes(current.hash))
    ) {
      throw new ResolveError(`"${normalized}" still holds conflict markers: edit them away first`);
    }
  }
  await writeBackLocal(context, normalized, upstream);
  close(keep);
  return done(
    normalized,
    keep,
    "resolved",
    `kept ${keep === "local" ? "the local" : "the merged"} ${normalized}; writing it back`,
  );
}

/** Longest a resolution waits for earlier write-backs of the path to be answered. */
const IN_FLIGHT_WAIT_MS = 10_000;

/**
 * Waits until no write-back of `path` awaits the master's answer: a rejection arriving
 * after the resolution would reopen the conflict.
 */
async function answered(tables: ReplicaTables, path: string): Promise<void> {
  const deadline = Date.now() + IN_FLIGHT_WAIT_MS;
  while (tables.journal.hasOpen(path)) {
    if (Date.now() > deadline) {
      throw new ResolveError(
        `Write-backs of "${path}" are still waiting for the master: try again shortly`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Journals the local file as a deliberate change over the master's `upstream` version. */
async function writeBackLocal(
  context: ResolveContext,
  path: string,
  upstream: MasterVersion,
): Promise<void> {
  const { workspace, store, tables } = context;
  // Seen from now on: the master's version is the one this write replaces, so the master
  // accepts it (nothing newer than it came from elsewhere).
  tables.paths.setApplied(path, upstream);
  await workspace.capture([path]);
  const latest = store.latest(path);
  if (!latest) return;
  const journaled = tables.journal.list("pending").some((entry) =>
    entry.path === path && entry.sourceSeq === latest.sequence
  );
  if (journaled) return;
  tables.journal.append([journalEntry(latest, upstream.sequence)]);
}

function journalEntry(latest: Iteration, masterSeen: number) {
  return {
    sourceSeq: latest.sequence,
    path: latest.path,
    operation: latest.deleted ? "delete" as const : "write" as const,
    newPath: null,
    hash: latest.deleted ? null : latest.hash,
    size: latest.size,
    mode: latest.mode,
    deleted: latest.deleted,
    masterSeen,
  };
}

async function writeVersion(
  context: ResolveContext,
  path: string,
  version: MasterVersion,
): Promise<void> {
  if (version.deleted) await context.workspace.remove(path, { origin: "master" });
  else await context.workspace.writeContent(path, version.hash, version.mode, { origin: "master" });
}

async function mergeVersions(
  context: ResolveContext,
  path: string,
  base: MasterVersion,
  upstream: MasterVersion,
) {
  const local = context.store.latest(path);
  const read = async (
    hash: string | null,
  ) => (hash ? await context.cas.readBytes(hash) : new Uint8Array());
  const outcome = threeWayMerge(
    base.deleted ? null : await read(base.hash),
    await read(local && !local.deleted ? local.hash : null),
    await read(upstream.deleted ? null : upstream.hash),
  );
  if (outcome.kind === "binary") {
    throw new ResolveError(`"${path}" is binary and cannot be merged: keep local or upstream`);
  }
  return outcome;
}

function done(
  path: string,
  keep: ConflictChoice,
  state: ResolveOutcome["state"],
  message: string,
): ResolveOutcome {
  return { path, keep, state, message };
}
