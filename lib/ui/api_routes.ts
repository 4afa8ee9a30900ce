import { Hono } from "hono";
import type { Routes } from "../net/mod.ts";
import { type ContentSide, diffContents, hunkToJson } from "../history/mod.ts";
import { changeEntry, HttpError } from "../http/mod.ts";
import { errorMessage } from "../log/mod.ts";
import {
  parseRestorePoint,
  restorePlanToJson,
  type RestorePoint,
  restoreResultToJson,
  type Snapshots,
} from "../snapshot/mod.ts";
import {
  folderPage,
  historyPage,
  type Iteration,
  origins,
  S_IFLNK,
  S_IFMT,
  searchPaths,
  timelineNewer,
  timelinePage,
  type TimelinePageOptions,
} from "../store/mod.ts";
import { decodeText } from "../textdiff/mod.ts";
import type { Workspace } from "../workspace/mod.ts";
import { markBursts } from "./bursts.ts";
import { contentKind } from "./content_kind.ts";

/** Largest content `GET /ui/api/file` returns as text. */
export const MAX_VIEW_BYTES = 2 * 1024 * 1024;

/** The master's version of a path as a replica knows it: what a kept content is diffed against. */
export interface MasterVersion {
  /** The master sequence of that version. */
  sequence: number;
  /** Its content hash (`""` for a deletion). */
  hash: string;
  /** Whether the master deleted the path. */
  deleted: boolean;
}

/** What {@linkcode uiApiRoutes} serves from. */
export interface UiApiDeps {
  /** The workspace. */
  workspace: Workspace;
  /** Its snapshot engine, for point-in-time restore. */
  snapshots: Snapshots;
  /**
   * The master's version of a path as this replica knows it (the one held back behind a
   * conflict, else the one last applied), `null` when none is known or this is no replica.
   * @default {none known}
   */
  masterVersion?: (path: string) => MasterVersion | null;
}

/**
 * The web UI's read models under `/ui/api/` (the UI also uses the REST routes for
 * content, diffs, the live feed (`GET /events`), snapshots and status). Every list is a
 * page cut on the server:
 *
 * | request | answer |
 * | --- | --- |
 * | `GET /ui/api/timeline?before=SEQ&limit=N&origin=O&prefix=P&from=MS&to=MS` | `{"sequence","items":[{…, "burst_start"}],"next_before"}`, newest first |
 * | `GET /ui/api/origins` | `{"origins":[…]}` |
 * | `GET /ui/api/tree?dir=D&cursor=C&limit=N` | `{"dir","entries":[…],"next"}`, in path order |
 * | `GET /ui/api/search?q=TEXT&limit=N` | `{"paths":[…]}` |
 * | `GET /ui/api/history?path=P&before=N&limit=N` | `{"path","items":[…],"next_before"}`, newest first |
 * | `GET /ui/api/file?path=P&at=N` | `{"path","iteration","kind","text"?}`: `text`, `image`, `binary`, `symlink`, `deleted`, `too_large` |
 * | `GET /ui/api/kept-diff?path=P&hash=H` | `{"path","master","notes",…}`: the diff from the master's version to a conflict's kept content, as `GET /files/{path}/diff?format=json` has it |
 * | `GET /ui/api/restore-plan?to=SEQ\|TIME` | the plan `restore --to … --dry-run` prints, with `timestamp` |
 * | `POST /ui/api/restore` `{"sequence"}` | what `restore --to` did |
 *
 * @param deps The workspace and snapshot engine.
 * @returns The routes, to mount at `/`.
 */
export function uiApiRoutes(deps: UiApiDeps): Routes {
  const { workspace, snapshots } = deps;
  const store = workspace.store;
  const app = new Hono();

  app.get("/ui/api/timeline", (c) => {
    const options: TimelinePageOptions = {
      limit: integer(c.req.query("limit"), "limit", 1) ?? 100,
    };
    const before = integer(c.req.query("before"), "before", 1);
    if (before !== undefined) options.before = before;
    const origin = c.req.query("origin");
    if (origin) options.origin = origin;
    const prefix = c.req.query("prefix");
    if (prefix) options.prefix = prefix;
    const from = integer(c.req.query("from"), "from", 0);
    if (from !== undefined) options.fromMs = from;
    const to = integer(c.req.query("to"), "to", 0);
    if (to !== undefined) options.toMs = to;
    const page = timelinePage(store, options);
    const marks = markBursts(page, timelineNewer(store, options));
    const last = page.at(-1);
    return c.json({
      sequence: store.sequence(),
      items: page.map((iteration, i) => ({ ...changeEntry(iteration), burst_start: marks[i] })),
      next_before: last && page.length === options.limit ? last.sequence : null,
    });
  });

  app.get("/ui/api/origins", (c) => c.json({ origins: origins(store) }));

  app.get("/ui/api/tree", (c) => {
    const dirText = c.req.query("dir") ?? "";
    const dir = dirText === "" ? "" : checked(workspace, dirText);
    let page;
    try {
      page = folderPage(store, dir, {
        cursor: c.req.query("cursor") ?? "",
        limit: integer(c.req.query("limit"), "limit", 1) ?? 200,
      });
    } catch (error) {
      if (error instanceof RangeError) throw new HttpError(400, "bad_parameter", error.message);
      throw error;
    }
    return c.json({
      dir: page.dir,
      next: page.next,
      entries: page.entries.map((e) =>
        e.type === "dir" ? e : ({ type: "file", name: e.name, ...changeEntry(e.latest) })
      ),
    });
  });

  app.get("/ui/api/search", (c) => {
    const q = c.req.query("q") ?? "";
    if (q === "") return c.json({ paths: [] });
    return c.json({ paths: searchPaths(store, q, integer(c.req.query("limit"), "limit", 1)) });
  });

  app.get("/ui/api/history", (c) => {
    const path = checked(workspace, required(c.req.query("path"), "path"));
    const limit = integer(c.req.query("limit"), "limit", 1) ?? 100;
    const before = integer(c.req.query("before"), "before", 1);
    const items = historyPage(store, path, before === undefined ? { limit } : { before, limit });
    if (items.length === 0 && before === undefined) {
      throw new HttpError(404, "not_found", `Unknown path "${path}"`);
    }
    const last = items.at(-1);
    return c.json({
      path,
      items: items.map(changeEntry),
      next_before: last && items.length === limit ? last.iteration : null,
    });
  });

  app.get("/ui/api/file", async (c) => {
    const path = checked(workspace, required(c.req.query("path"), "path"));
    const iteration = find(path, integer(c.req.query("at"), "at", 1));
    const base = { path, iteration: changeEntry(iteration) };
    if (iteration.deleted) return c.json({ ...base, kind: "deleted" });
    if ((iteration.mode & S_IFMT) === S_IFLNK) {
      const target = new TextDecoder().decode(await workspace.cas.readBytes(iteration.hash));
      return c.json({ ...base, kind: "symlink", text: target });
    }
    if (iteration.size > MAX_VIEW_BYTES) return c.json({ ...base, kind: "too_large" });
    const bytes = await workspace.cas.readBytes(iteration.hash);
    const kind = contentKind(path, bytes);
    if (kind.kind === "text") return c.json({ ...base, kind: "text", text: decodeText(bytes) });
    return c.json({ ...base, ...kind });
  });

  app.get("/ui/api/kept-diff", async (c) => {
    const path = checked(workspace, required(c.req.query("path"), "path"));
    const hash = required(c.req.query("hash"), "hash");
    if (!/^[0-9a-f]{64}$/.test(hash)) {
      throw new HttpError(400, "bad_parameter", `Invalid hash "${hash}": expected 64 hex digits`);
    }
    if ((await workspace.cas.objectSize(hash)) === null) {
      throw new HttpError(404, "not_found", `No content "${hash}" is stored`);
    }
    // Against the master's version, not the file as it is now (which, on a local-sync
    // replica, usually is the kept content itself).
    const { master, side, notes } = await masterSide(path);
    const kept = { hash, label: `b/${path} (kept)`, what: `the kept content of "${path}"` };
    // Over the limit of every diff: a HistoryError `too_large`, which createApp answers 413.
    const diff = await diffContents(workspace.cas, side, kept);
    return c.json({ path, master, notes, ...diff, hunks: diff.hunks.map(hunkToJson) });
  });

  /** The old side of a kept-content diff: the master's version when it is known and here. */
  async function masterSide(
    path: string,
  ): Promise<{ master: MasterVersion | null; side: ContentSide; notes: string[] }> {
    const master = deps.masterVersion?.(path) ?? null;
    const nothing = { hash: null, label: `a/${path}`, what: "" };
    if (master === null) {
      const note = `No master version of "${path}" is known here: the kept content is shown alone`;
      return { master, side: nothing, notes: [note] };
    }
    const at = `the master's version of "${path}" (sequence ${master.sequence})`;
    if (master.deleted) {
      const note =
        `The master's version of "${path}" (sequence ${master.sequence}) is a deletion, shown as empty`;
      return { master, side: nothing, notes: [note] };
    }
    if ((await workspace.cas.objectSize(master.hash)) === null) {
      const note = `The content of ${at} is not stored here: the kept content is shown alone`;
      return { master, side: nothing, notes: [note] };
    }
    const side = { hash: master.hash, label: `a/${path}@master:${master.sequence}`, what: at };
    return { master, side, notes: [] };
  }

  app.get("/ui/api/restore-plan", (c) => {
    const text = required(c.req.query("to"), "to");
    const plan = restorePlan(snapshots, restorePoint(text));
    const at = store.bySequence(plan.sequence);
    return c.json({ ...restorePlanToJson(plan), timestamp: at?.timestamp ?? null });
  });

  app.post("/ui/api/restore", async (c) => {
    const body = await c.req.json().catch(() => undefined) as { sequence?: unknown } | undefined;
    const sequence = body?.sequence;
    if (typeof sequence !== "number" || !Number.isSafeInteger(sequence) || sequence < 0) {
      throw new HttpError(400, "bad_request", 'Expected {"sequence": N} with N >= 0');
    }
    const plan = restorePlan(snapshots, { sequence });
    return c.json(restoreResultToJson(await snapshots.restoreTo(plan)));
  });

  /** Iteration `n` of the path (its latest when `n` is undefined), or a 404. */
  function find(path: string, n: number | undefined): Iteration {
    const found = n === undefined ? store.latest(path) : store.iteration(path, n);
    if (!found) {
      throw new HttpError(
        404,
        "not_found",
        n === undefined ? `Unknown path "${path}"` : `Unknown iteration ${n} of "${path}"`,
      );
    }
    return found;
  }

  return app;
}

function restorePlan(snapshots: Snapshots, point: RestorePoint) {
  try {
    return snapshots.restorePlan(point);
  } catch (error) {
    if (error instanceof RangeError) throw new HttpError(400, "bad_parameter", error.message);
    throw error;
  }
}

function restorePoint(text: string): RestorePoint {
  try {
    return parseRestorePoint(text, Date.now());
  } catch (error) {
    throw new HttpError(400, "bad_parameter", `Invalid moment "${text}": ${errorMessage(error)}`);
  }
}

/** The normalized path; a refused one throws the `PathError` `createApp` answers 400. */
function checked(workspace: Workspace, path: string): string {
  return workspace.checkPath(path);
}

function required(text: string | undefined, name: string): string {
  if (text === undefined || text === "") {
    throw new HttpError(400, "bad_parameter", `The parameter "${name}" is required`);
  }
  return text;
}

function integer(text: string | undefined, name: string, min: number): number | undefined {
  if (text === undefined || text === "") return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < min) {
    throw new HttpError(
      400,
      "bad_parameter",
      `Invalid ${name} "${text}": expected an integer >= ${min}`,
    );
  }
  return value;
}
