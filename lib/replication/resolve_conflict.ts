import type { Cas } from "../cas/mod.ts";
import { hasConflictMarkers, threeWayMerge } from "../localsync/mod.ts";
import { ORIGINS, type Store } from "../store/mod.ts";
import type { Workspace } from "../workspace/mod.ts";
import { journalEntryOf } from "./journal_plan.ts";
import type { ReplicaTables } from "./replica_tables.ts";
import type { MasterVersion } from "./replica_paths.ts";

/** How a person settles a local-sync conflict. */
export type ConflictChoice = "local" | "upstream" | "merged";

const CONFLICT_CHOICES: readonly ConflictChoice[] = ["local", "upstream", "merged"];

/** Whether `value` is a {@linkcode ConflictChoice}: `"local"`, `"upstream"` or `"merged"`. */
export function isConflictChoice(value: unknown): value is ConflictChoice {
  return (CONFLICT_CHOICES as readonly unknown[]).includes(value);
}

/** What {@linkcode resolveConflict} did. */
export interface ResolveOutcome {
  /** The path that was resolved. */
  path: string;
  /** Which side was kept. */
  keep: ConflictChoice;
  /** `resolved`, or `merging` when a merge left conflict markers for the person to edit. */
  state: "resolved" | "merging";
  /** What happened, for a person. */
  message: string;
}

/** A resolution that cannot be done as asked; the message says why. */
export class ResolveError extends Error {
  /** Makes the error with a message saying why. */
  constructor(message: string) {
    super(message);
    this.name = "ResolveError";
  }
}

/** What resolution needs of a replica. */
export interface ResolveContext {
  /** The replica's workspace, for writing the resolution. */
  workspace: Workspace;
  /** The replica's store, for the upstream version. */
  store: Store;
  /** The replica's content store. */
  cas: Cas;
  /** The replica's conflict and journal tables. */
  tables: ReplicaTables;
}

/**
 * Origin of a merged file that still holds conflict markers: written for the person to
 * edit, never journaled for write-back (only the settled file is).
 */
export const MERGE_ORIGIN: string = ORIGINS.localSyncMerge;

/**
 * Settles the open conflicts of `path` on a local-sync replica (PROTOCOL.md §6):
 *
 * - `upstream`: the master's version replaces the local file (which stays in history);
 * - `local`: the file as the person has it is written back over the master's version;
 * - `merged`: a three-way merge of the common base, the local file and the master's
 *   version. A clean merge is written and written back; one with overlapping changes is
 *   written with conflict markers and the conflict stays open (`merging`) until the
 *   person edits the markers away and resolves again (`--keep merged` or `--keep local`).
 *   Should the master's version change meanwhile, that second `merged` merges the
 *   person's edit with the change (against the version the markers were made from)
 *   instead of writing over it.
 *
 * @throws {ResolveError} When the path has no open conflict, or a merge is impossible
 * (binary content, a deletion on one side, markers not yet edited away).
 */
export async function resolveConflict(
  context: ResolveContext,
  path: string,
  keep: ConflictChoice,
): Promise<ResolveOutcome> {
  const { workspace, tables } = context;
  const normalized = workspace.checkPath(path);
  const openConflicts = () =>
    tables.conflicts.list({ unresolved: true }).filter((conflict) => conflict.path === normalized);
  if (openConflicts().length === 0) {
    throw new ResolveError(`No open conflict for "${normalized}"`);
  }
  await workspace.settled();
  await answered(tables, normalized);
  // Listed only now: an edit captured above (the person fixing merge markers, say) is
  // written back and rejected while we wait, which updates the open conflict.
  const open = openConflicts();
  if (open.length === 0) throw new ResolveError(`No open conflict for "${normalized}"`);
  const state = tables.paths.get(normalized);
  const upstream = state.deferred ?? state.applied;
  const close = (resolution: string) =>
    open.forEach((conflict) => tables.conflicts.resolve(conflict.id, resolution));
  if (keep === "upstream") {
    await writeVersion(context, normalized, upstream);
    tables.paths.setApplied(normalized, upstream);
    forgetMergeBase(context, normalized);
    close("upstream");
    return done(normalized, keep, "resolved", `took the master's version of ${normalized}`);
  }
  if (keep === "merged") {
    const merging = open.some((conflict) => conflict.resolution === "merging");
    if (merging) await refuseMarkers(context, normalized);
    // First time: merge against the version both sides last agreed on. After markers:
    // only when the master's version moved on since they were written, merge the
    // person's edit with that change, against the version the markers came from.
    const base = merging ? mergeBase(context, normalized) : state.applied;
    if (base !== undefined && (!merging || base.sequence < upstream.sequence)) {
      const merged = await mergeVersions(context, normalized, base, upstream);
      await workspace.writeBytes(normalized, merged.bytes, { origin: MERGE_ORIGIN });
      if (merged.kind === "conflicted") {
        rememberMergeBase(context, normalized, upstream);
        open.forEach((conflict) => tables.conflicts.note(conflict.id, "merging"));
        const again = merging ? ` (the master's version changed while you edited it)` : "";
        return done(
          normalized,
          keep,
          "merging",
          `wrote ${normalized} with conflict markers${again}: edit it, then run sync resolve ${normalized} --keep merged`,
        );
      }
    }
  }
  forgetMergeBase(context, normalized);
  await writeBackLocal(context, normalized, upstream);
  close(keep);
  return done(
    normalized,
    keep,
    "resolved",
    `kept ${keep === "local" ? "the local" : "the merged"} ${normalized}; writing it back`,
  );
}

/** Store metadata naming the master version a path's conflict markers were merged from. */
const MERGE_BASE_META = "localsync.merge_base:";

function rememberMergeBase(context: ResolveContext, path: string, version: MasterVersion): void {
  context.store.setMeta(MERGE_BASE_META + path, JSON.stringify(version));
}

function mergeBase(context: ResolveContext, path: string): MasterVersion | undefined {
  const text = context.store.getMeta(MERGE_BASE_META + path);
  return text ? JSON.parse(text) as MasterVersion : undefined;
}

function forgetMergeBase(context: ResolveContext, path: string): void {
  if (context.store.getMeta(MERGE_BASE_META + path)) {
    context.store.setMeta(MERGE_BASE_META + path, "");
  }
}

/** Refuses to settle a merge whose file still holds the markers written for the person. */
async function refuseMarkers(context: ResolveContext, path: string): Promise<void> {
  const current = context.store.latest(path);
  if (
    current && !current.deleted && hasConflictMarkers(await context.cas.readBytes(current.hash))
  ) {
    throw new ResolveError(`"${path}" still holds conflict markers: edit them away first`);
  }
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
  // Journaled by the capture above when it recorded something new (and maybe sent already);
  // an entry of it rejected earlier is journaled again, now over the master's version.
  if (tables.journal.hasOpenSource(path, latest.sequence)) return;
  tables.journal.append([
    journalEntryOf(latest, latest.deleted ? "delete" : "write", upstream.sequence),
  ]);
}

async function writeVersion(
  context: ResolveContext,
  path: string,
  version: MasterVersion,
): Promise<void> {
  if (version.deleted) await context.workspace.remove(path, { origin: ORIGINS.master });
  else {await context.workspace.writeContent(path, version.hash, version.mode, {
      origin: ORIGINS.master,
    });}
}

async function mergeVersions(
  context: ResolveContext,
  path: string,
  base: MasterVersion,
  upstream: MasterVersion,
) {
  const local = context.store.latest(path);
  // Both sides created the file: merged against empty. One side deleted it: no merge
  // could say which lines the deletion kept, so the person chooses a side.
  if (!base.deleted && (!local || local.deleted || upstream.deleted)) {
    throw new ResolveError(
      `"${path}" was deleted on one side and cannot be merged: keep local or upstream`,
    );
  }
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
