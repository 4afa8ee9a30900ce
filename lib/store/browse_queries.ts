import type { SQLInputValue } from "node:sqlite";
import { columns } from "../db/mod.ts";
import { iterationFromRow } from "./rows.ts";
import type { Store } from "./store.ts";
import { isFolderMode, type Iteration } from "./types.ts";

/** Largest page any of these queries returns. */
export const MAX_PAGE = 1_000;

/** Options for {@linkcode timelinePage}. */
export interface TimelinePageOptions {
  /** Only iterations with a sequence below this one. @default {every sequence} */
  before?: number;
  /** Iterations in the page, at most {@linkcode MAX_PAGE}. @default {100} */
  limit?: number;
  /** Only iterations by this origin (`local`, `api`, a sandbox id, …). */
  origin?: string;
  /** Only paths that start with this text (a folder is `dir/`). */
  prefix?: string;
  /** Only iterations recorded at or after this epoch-ms time. */
  fromMs?: number;
  /** Only iterations recorded at or before this epoch-ms time. */
  toMs?: number;
}

/**
 * One page of the workspace's iterations, newest first, for a timeline that scrolls back:
 * the next page starts `before` the last sequence of this one. Walks the sequence index
 * backwards, so a page costs the same on the first and the 100,000th iteration.
 *
 * @param store The store.
 * @param options Filters and the page's place.
 * @returns Up to `limit` iterations, highest sequence first.
 */
export function timelinePage(store: Store, options: TimelinePageOptions = {}): Iteration[] {
  const [where, args] = filters(options);
  const limit = Math.min(Math.max(options.limit ?? 100, 1), MAX_PAGE);
  const rows = store.db.prepare(
    `SELECT ${COLUMNS} FROM iterations WHERE sequence < ? AND ${where}
     ORDER BY sequence DESC LIMIT ?`,
  ).all(options.before ?? Number.MAX_SAFE_INTEGER, ...args, limit);
  return rows.map(iterationFromRow);
}

/**
 * The oldest iteration at or after `before` under the same filters: the row just above a
 * {@linkcode timelinePage}, which tells whether the page's first row continues a burst.
 *
 * @param store The store.
 * @param options The page's filters and place.
 * @returns The iteration, or `undefined` on the first page.
 */
export function timelineNewer(
  store: Store,
  options: TimelinePageOptions = {},
): Iteration | undefined {
  if (options.before === undefined) return undefined;
  const [where, args] = filters(options);
  const row = store.db.prepare(
    `SELECT ${COLUMNS} FROM iterations WHERE sequence >= ? AND ${where}
     ORDER BY sequence LIMIT 1`,
  ).get(options.before, ...args);
  return row ? iterationFromRow(row) : undefined;
}

function filters(options: TimelinePageOptions): [string, SQLInputValue[]] {
  const where: string[] = ["1 = 1"];
  const args: SQLInputValue[] = [];
  if (options.origin !== undefined) {
    where.push("origin = ?");
    args.push(options.origin);
  }
  if (options.prefix !== undefined && options.prefix !== "") {
    where.push("substr(path, 1, ?) = ?");
    args.push(options.prefix.length, options.prefix);
  }
  if (options.fromMs !== undefined) {
    where.push("timestamp >= ?");
    args.push(options.fromMs);
  }
  if (options.toMs !== undefined) {
    where.push("timestamp <= ?");
    args.push(options.toMs);
  }
  return [where.join(" AND "), args];
}

/**
 * One page of a path's iterations, newest first: the next page starts `before` the last
 * iteration number of this one.
 *
 * @param store The store.
 * @param path The normalized path.
 * @param page Iterations below `before`, at most `limit` (capped at {@linkcode MAX_PAGE}).
 * @returns The iterations, highest number first.
 */
export function historyPage(
  store: Store,
  path: string,
  page: { before?: number; limit?: number } = {},
): Iteration[] {
  const limit = Math.min(Math.max(page.limit ?? 100, 1), MAX_PAGE);
  const rows = store.db.prepare(
    `SELECT ${COLUMNS} FROM iterations WHERE path = ? AND iteration < ? ORDER BY iteration DESC LIMIT ?`,
  ).all(path, page.before ?? Number.MAX_SAFE_INTEGER, limit);
  return rows.map(iterationFromRow);
}

/** The origins that made iterations, for a timeline's filter; at most 200. */
export function origins(store: Store): string[] {
  const rows = store.db.prepare(
    "SELECT DISTINCT origin FROM iterations ORDER BY origin LIMIT 200",
  ).all();
  return rows.map((row) => columns(row).text("origin"));
}

/** A folder's child in {@linkcode folderPage}: a file with its latest iteration, or a folder. */
export type FolderEntry =
  | { type: "dir"; name: string; path: string }
  | { type: "file"; name: string; path: string; latest: Iteration };

/** One page of a folder's children. */
export interface FolderPage {
  /** The folder (`""` for the root). */
  dir: string;
  /** This page's children, in path order. */
  entries: FolderEntry[];
  /** Where the next page starts (opaque), `null` after the last child. */
  next: string | null;
}

/**
 * The live children of a folder, one page at a time. Each child costs one seek in the
 * path index (a folder's whole subtree is skipped by seeking past `name0`, `0` being the
 * character after `/`), so the first page of a folder of 100,000 entries costs the same as
 * one of ten. Children come in path order, where `a.txt` sorts before the folder `a/`.
 *
 * @param store The store.
 * @param dir The folder, normalized (`""` for the root).
 * @param page Where the page starts (a `next` from the page before) and how long it is.
 * @returns The page.
 * @throws {RangeError} For a `cursor` that does not belong to `dir`.
 */
export function folderPage(
  store: Store,
  dir: string,
  page: { cursor?: string; limit?: number } = {},
): FolderPage {
  const prefix = dir === "" ? "" : `${dir}/`;
  const limit = Math.min(Math.max(page.limit ?? 200, 1), MAX_PAGE);
  let [inclusive, key] = parseCursor(page.cursor, prefix);
  const seekAfter = store.db.prepare(
    "SELECT path FROM paths WHERE path > ? AND deleted = 0 ORDER BY path LIMIT 1",
  );
  const seekFrom = store.db.prepare(
    "SELECT path FROM paths WHERE path >= ? AND deleted = 0 ORDER BY path LIMIT 1",
  );
  const isLive = store.db.prepare("SELECT 1 FROM paths WHERE path = ? AND deleted = 0");
  const children: Array<{ name: string; path: string; folder: boolean }> = [];
  let next: string | null = null;
  for (;;) {
    const row = (inclusive ? seekFrom : seekAfter).get(key);
    const path = row ? columns(row).text("path") : undefined;
    if (path === undefined || !path.startsWith(prefix)) break;
    const rest = path.slice(prefix.length);
    const slash = rest.indexOf("/");
    const name = slash < 0 ? rest : rest.slice(0, slash);
    // A recorded folder (PROTOCOL.md §8) is listed at its own path, which sorts before
    // its children: reaching them, it is already listed, on this page or an earlier one.
    const listedAlready = slash >= 0 && isLive.get(`${prefix}${name}`) !== undefined;
    if (!listedAlready) {
      if (children.length === limit) {
        next = `${inclusive ? "d" : "f"}:${key}`;
        break;
      }
      children.push({ name, path: `${prefix}${name}`, folder: slash >= 0 });
    }
    [inclusive, key] = slash < 0 ? [false, path] : [true, `${prefix}${name}0`];
  }
  const latest = store.latestOf(children.filter((c) => !c.folder).map((c) => c.path));
  const entries: FolderEntry[] = [];
  for (const child of children) {
    if (child.folder) entries.push({ type: "dir", name: child.name, path: child.path });
    else {
      const found = latest.get(child.path);
      if (found && isFolderMode(found.mode)) {
        entries.push({ type: "dir", name: child.name, path: child.path });
      } else if (found) {
        entries.push({ type: "file", name: child.name, path: child.path, latest: found });
      }
    }
  }
  return { dir, entries, next };
}

/**
 * Live paths beneath `dir` down to `depth` levels, with their latest iterations, in path
 * order; of the paths deeper than that, only the first under each folder at the cut
 * level (`depth` levels, at least one) is returned, standing for that folder. What
 * `Store.list` returns, less everything a listing cut at `depth` would fold away: each
 * returned path costs one seek in the path index and each cut folder's subtree is
 * skipped by seeking past `folder0` (`0` being the character after `/`), so listing the
 * top of 100,000 files reads only the top.
 *
 * @param store The store.
 * @param dir The folder, normalized (`""` for the root); the folder itself is left out.
 * @param depth Levels beneath `dir` returned whole (0 cuts at the first level too).
 * @returns The iterations, sorted by path.
 */
export function listToDepth(store: Store, dir: string, depth: number): Iteration[] {
  const prefix = dir === "" ? "" : `${dir}/`;
  const base = dir === "" ? 0 : dir.split("/").length;
  const cut = base + Math.max(depth, 1);
  const seekAfter = store.db.prepare(
    "SELECT path FROM paths WHERE path > ? AND deleted = 0 ORDER BY path LIMIT 1",
  );
  const seekFrom = store.db.prepare(
    "SELECT path FROM paths WHERE path >= ? AND deleted = 0 ORDER BY path LIMIT 1",
  );
  const paths: string[] = [];
  let [inclusive, key] = [true, prefix];
  for (;;) {
    const row = (inclusive ? seekFrom : seekAfter).get(key);
    const path = row ? columns(row).text("path") : undefined;
    if (path === undefined || !path.startsWith(prefix)) break;
    paths.push(path);
    const segments = path.split("/");
    const folder = segments.slice(0, cut).join("/");
    [inclusive, key] = segments.length - base <= depth || folder === path
      ? [false, path]
      : [true, `${folder}0`];
  }
  const latest = store.latestOf(paths);
  return paths.flatMap((path) => latest.get(path) ?? []);
}

/** `[inclusive, key]` of a cursor: `f:KEY` seeks after KEY, `d:KEY` from KEY. */
function parseCursor(cursor: string | undefined, prefix: string): [boolean, string] {
  if (cursor === undefined || cursor === "") return [true, prefix];
  const match = /^([df]):(.*)$/s.exec(cursor);
  if (!match || !match[2]!.startsWith(prefix)) {
    throw new RangeError(`Invalid cursor "${cursor}" for this folder`);
  }
  return [match[1] === "d", match[2]!];
}

/**
 * Live paths whose name contains `text` (case-insensitive), sorted, at most `limit`.
 *
 * @param store The store.
 * @param text What to look for.
 * @param limit Most paths returned (at most {@linkcode MAX_PAGE}).
 * @returns The matching paths.
 */
export function searchPaths(store: Store, text: string, limit = 200): string[] {
  const rows = store.db.prepare(
    "SELECT path FROM paths WHERE deleted = 0 AND instr(lower(path), lower(?)) > 0 ORDER BY path LIMIT ?",
  ).all(text, Math.min(Math.max(limit, 1), MAX_PAGE));
  return rows.map((row) => columns(row).text("path"));
}

const COLUMNS = "sequence, path, iteration, timestamp, size, hash, mode, deleted, origin";
