import { z } from "zod";
import { parseRestorePoint } from "../snapshot/mod.ts";
import type { Iteration, Store } from "../store/mod.ts";
import type { Workspace } from "../workspace/mod.ts";
import { ToolError } from "./results.ts";

/** A moment in the store: a sequence number, an ISO time, or a time ago. */
export const pointSchema = z.union([
  z.number().int().min(0),
  z.string().min(1).max(64),
]);

/** What a moment argument's description says it accepts. */
export const POINT_HELP =
  "a store sequence number (e.g. 42), an ISO 8601 time (2026-05-01T12:00:00Z) or a time ago (90s, 10m, 2h, 1d)";

/** A workspace path argument. */
export const pathSchema = z.string().min(1).max(4096).describe(
  "Workspace-relative path, e.g. src/app.ts (no leading /, no ..)",
);

/** An `offset` argument for paging. */
export const offsetSchema = z.number().int().min(0).optional().describe(
  "Entries to skip, for the next page (a truncated answer says which offset to pass)",
);

/**
 * The store sequence a moment names: a number as is (it must exist), a time as the last
 * sequence recorded at or before it.
 *
 * @throws {ToolError} For a sequence beyond the newest or text that is not a moment.
 */
export function sequenceOf(store: Store, point: number | string): number {
  const newest = store.sequence();
  let sequence: number;
  if (typeof point === "number") sequence = point;
  else {
    let parsed;
    try {
      parsed = parseRestorePoint(point, Date.now());
    } catch (error) {
      throw new ToolError((error as Error).message);
    }
    sequence = "sequence" in parsed ? parsed.sequence : store.sequenceAt(parsed.timestamp);
  }
  if (sequence > newest) {
    throw new ToolError(`Sequence ${sequence} is not in the store yet (the newest is ${newest})`);
  }
  return sequence;
}

/** Normalizes a folder argument: `""`, `"."` and `"/"` are the root. */
export function folderOf(workspace: Workspace, path: string | undefined): string {
  if (path === undefined || path === "" || path === "." || path === "/") return "";
  return workspace.checkPath(path);
}

/**
 * The iteration a read names: `iteration` N, else the one current at `at`, else the latest.
 *
 * @throws {ToolError} For an unknown path or iteration, or a deletion.
 */
export function pickIteration(
  workspace: Workspace,
  path: string,
  choice: { iteration?: number | undefined; at?: number | string | undefined },
): Iteration {
  const store = workspace.store;
  const normalized = workspace.checkPath(path);
  let found: Iteration | undefined;
  if (choice.iteration !== undefined) {
    found = store.iteration(normalized, choice.iteration);
    if (!found) {
      const last = store.latest(normalized);
      throw new ToolError(
        last
          ? `Unknown iteration ${choice.iteration} of "${normalized}": it has ${last.iteration}`
          : `Unknown path "${normalized}": Chronicle has never recorded it`,
      );
    }
  } else if (choice.at !== undefined) {
    const sequence = sequenceOf(store, choice.at);
    found = store.history(normalized).filter((i) => i.sequence <= sequence).at(-1);
    if (!found) {
      throw new ToolError(`"${normalized}" did not exist yet at sequence ${sequence}`);
    }
  } else {
    found = store.latest(normalized);
    if (!found) {
      throw new ToolError(`Unknown path "${normalized}": Chronicle has never recorded it`);
    }
  }
  if (found.deleted) {
    throw new ToolError(
      `Iteration ${found.iteration} of "${normalized}" is its deletion: call file_history ` +
        `and read an earlier iteration`,
    );
  }
  return found;
}

/** One iteration as the tools show it. */
export function iterationJson(iteration: Iteration): Record<string, unknown> {
  return {
    path: iteration.path,
    iteration: iteration.iteration,
    sequence: iteration.sequence,
    time: new Date(iteration.timestamp).toISOString(),
    size: iteration.size,
    hash: iteration.hash,
    mode: (iteration.mode & 0o7777).toString(8),
    origin: iteration.origin,
    deleted: iteration.deleted,
  };
}
