import type { SQLInputValue } from "node:sqlite";
import type { Store } from "./store.ts";
import type { Iteration } from "./types.ts";

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
  ).all(options.before ?? Number.MAX_SAFE_INTEGER, ...args, limit) as Row[];
  return rows.map(toIteration);
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
  ).get(options.before, ...args) as Row | undefined;
  return row ? toIteration(row) : undefined;
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
  ).all(path, page.before ?? Number.MAX_SAFE_INTEGER, limit) as Row[];
  return rows.map(toIteration);
}

/** The origins that made iterations, for a timeline's filter; at most 200. */
export function origins(store: Store): string[] {
  const rows = store.db.prepare(
    "SELECT DISTINCT origin FROM iterations ORDER BY origin LIMIT 200",
  ).all() as Array<{ origin: string }>;
  return rows.map((row) => row.origin);
}

/** A folder's child in {@linkcode folderPage}: a file with its latest iteration, or a folder. */
export type FolderEntry =
  | { type: "dir"; name: string; path: string; files: number }
  | { type: "file"; name: string; path: string; latest: Iteration };

/** One page of a folder's children, and how many there are. */
export interface FolderPage {
  /** The folder (`""` for the root). */
  dir: string;
  /** Children in the whole folder. */
  total: number;
  /** This page's children: folders first, then files, each by name. */
  entries: FolderEntry[];
}

/**
 * The live children of a folder, one page at a time, so a folder of 100,000 files costs
 * one grouped scan in SQLite and a page of rows, never the whole list in memory.
 *
 * @param store The store.
 * @param dir The folder, normalized (`""` for the root).
 * @param page Where the page starts and how long it is (at most {@linkcode MAX_PAGE}).
 * @returns The page.
 */
export function folderPage(
  store: Store,
  dir: string,
  page: { offset?: number; limit?: number } = {},
): FolderPage {
  const start = dir === "" ? 1 : dir.length + 2;
  const range = dir === "" ? "1 = 1" : "(p.path >= ? AND p.path < ?)";
  const rangeArgs: SQLInputValue[] = dir === "" ? [] : [`${dir}/`, `${dir}0`];
  const grouped = `
    WITH under AS (SELECT substr(p.path, ?) AS rest FROM paths p WHERE p.deleted = 0 AND ${range}),
    kids AS (
      SELECT CASE WHEN instr(rest, '/') > 0 THEN substr(rest, 1, instr(rest, '/') - 1)
                  ELSE rest END AS name,
             instr(rest, '/') > 0 AS is_dir, COUNT(*) AS files
      FROM under GROUP BY name, is_dir)`;
  const total = (store.db.prepare(`${grouped} SELECT COUNT(*) AS n FROM kids`).get(
    start,
    ...rangeArgs,
  ) as { n: number }).n;
  const limit = Math.min(Math.max(page.limit ?? 200, 1), MAX_PAGE);
  const rows = store.db.prepare(
    `${grouped} SELECT name, is_dir, files FROM kids ORDER BY is_dir DESC, name LIMIT ? OFFSET ?`,
  ).all(start, ...rangeArgs, limit, Math.max(page.offset ?? 0, 0)) as Array<
    { name: string; is_dir: number; files: number }
  >;
  const join = (name: string) => dir === "" ? name : `${dir}/${name}`;
  const latest = store.latestOf(rows.filter((row) => !row.is_dir).map((row) => join(row.name)));
  const entries: FolderEntry[] = [];
  for (const row of rows) {
    const path = join(row.name);
    if (row.is_dir) entries.push({ type: "dir", name: row.name, path, files: row.files });
    else {
      const found = latest.get(path);
      if (found) entries.push({ type: "file", name: row.name, path, latest: found });
    }
  }
  return { dir, total, entries };
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
  ).all(text, Math.min(Math.max(limit, 1), MAX_PAGE)) as Array<{ path: string }>;
  return rows.map((row) => row.path);
}

type Row = Record<string, SQLInputValue>;
const COLUMNS = "sequence, path, iteration, timestamp, size, hash, mode, deleted, origin";

function toIteration(row: Row): Iteration {
  return {
    path: row.path as string,
    iteration: row.iteration as number,
    sequence: row.sequence as number,
    timestamp: row.timestamp as number,
    size: row.size as number,
    hash: row.hash as string,
    mode: row.mode as number,
    deleted: row.deleted === 1,
    origin: row.origin as string,
  };
}
