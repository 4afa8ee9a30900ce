import { readBodyLimited } from "./body_limit.ts";
import { type Context, Hono } from "hono";
import type { Routes } from "../net/mod.ts";
import { ContentNotFoundError, CorruptContentError } from "../cas/mod.ts";
import { errorMessage, log } from "../log/mod.ts";
import {
  diffIterations,
  HistoryError,
  iterationDiffText,
  iterationDiffToJson,
} from "../history/mod.ts";
import { PathError } from "../paths/mod.ts";
import {
  isFolderMode,
  type Iteration,
  listToDepth,
  ORIGINS,
  S_IFLNK,
  S_IFMT,
} from "../store/mod.ts";
import { ForbiddenWriteError, type Workspace } from "../workspace/mod.ts";
import { HttpError } from "./errors.ts";
import { verifiedBody } from "./_verified_body.ts";
import { type FileRoute, parseFileRoute } from "./file_route_path.ts";

/** Largest body a `PUT /files/{path}` accepts. */
export const MAX_PUT_BYTES = 100 * 1024 * 1024;

/** The versioned-files REST surface: listing, content, history, iterations, changes, writes. */
export function filesRoutes(workspace: Workspace): Routes {
  const app = new Hono();
  const store = workspace.store;

  app.get("/files", (c) => {
    const dir = c.req.query("path") ?? "";
    const depth = optionalInteger(c.req.query("depth"), "depth", 0);
    const normalized = dir === "" || dir === "/" ? "" : checked(workspace, dir);
    const live = depth === undefined
      ? store.list(normalized === "" ? {} : { dir: normalized })
      : listToDepth(store, normalized, depth);
    const entries = listEntries(live, normalized, depth);
    return c.json({ path: normalized, entries });
  });

  app.get("/files/*", async (c) => {
    const route = fileRoute(c.req.url);
    const path = checked(workspace, route.path);
    if (route.op === "diff") return await diffResponse(c, workspace, path);
    if (route.op === "history") {
      const history = store.history(path);
      if (history.length === 0) throw new HttpError(404, "not_found", `Unknown path "${path}"`);
      return c.json(history.map(historyEntry));
    }
    const iteration = route.op === "at"
      ? store.iteration(path, route.iteration)
      : store.latest(path);
    if (!iteration) {
      const what = route.op === "at"
        ? `iteration ${route.iteration} of "${path}"`
        : `path "${path}"`;
      throw new HttpError(404, "not_found", `Unknown ${what}`);
    }
    if (iteration.deleted) {
      throw new HttpError(
        410,
        "deleted",
        `Iteration ${iteration.iteration} of "${path}" is a deletion`,
      );
    }
    return await contentResponse(workspace, iteration);
  });

  app.get("/changes", (c) => {
    const since = optionalInteger(c.req.query("since"), "since", 0) ?? 0;
    const limit = optionalInteger(c.req.query("limit"), "limit", 1) ?? 1000;
    const changes = store.changesSince(since, { limit: Math.min(limit, 10_000) });
    return c.json({ since, sequence: store.sequence(), changes: changes.map(changeEntry) });
  });

  app.put("/files/*", async (c) => {
    const route = fileRoute(c.req.url);
    if (route.op !== "content") {
      throw new HttpError(400, "bad_request", "Only a file path can be written");
    }
    // Checked before the write: a path refused by the rules is a 400, one refused by
    // what is on disk (inside the write) a 409.
    const path = checked(workspace, route.path);
    return await writing(() => putFile(c, path));
  });

  /** `PUT /files/{path}`: a regular file; a link there is refused (409), never rewritten. */
  async function putFile(c: Context, path: string): Promise<Response> {
    // Streamed and refused at the limit, never read whole first.
    const body = await readBodyLimited(c.req.raw, MAX_PUT_BYTES);
    const modeText = c.req.query("mode");
    const mode = modeText === undefined ? undefined : parseMode(modeText);
    const iteration = await workspace.writeBytes(path, body, {
      origin: ORIGINS.api,
      ...(mode === undefined ? {} : { mode }),
    });
    const latest = iteration ?? store.latest(path)!;
    return c.json(historyEntry(latest), iteration ? 201 : 200);
  }

  app.delete("/files/*", async (c) => {
    const route = fileRoute(c.req.url);
    if (route.op !== "content") {
      throw new HttpError(400, "bad_request", "Only a file path can be deleted");
    }
    const path = checked(workspace, route.path);
    const latest = store.latest(path);
    if (!latest || latest.deleted) throw new HttpError(404, "not_found", `Unknown path "${path}"`);
    const iteration = await writing(() => workspace.remove(path, { origin: ORIGINS.api }));
    return c.json(historyEntry(iteration ?? store.latest(path)!));
  });

  return app;
}

/**
 * `GET /files/{path}/diff?from=N&to=M[&format=json]`: the unified diff between two
 * iterations (`to` defaults to the latest) as `text/x-diff`, or as JSON.
 */
async function diffResponse(c: Context, workspace: Workspace, path: string): Promise<Response> {
  const from = optionalInteger(c.req.query("from"), "from", 1);
  if (from === undefined) {
    throw new HttpError(400, "bad_parameter", 'Missing "from": give ?from=N (and ?to=M)');
  }
  const to = optionalInteger(c.req.query("to"), "to", 1);
  const format = c.req.query("format") ?? "diff";
  if (format !== "diff" && format !== "json") {
    throw new HttpError(400, "bad_parameter", `Invalid format "${format}": expected diff or json`);
  }
  let diff;
  try {
    diff = await diffIterations(workspace.store, workspace.cas, path, { from, to });
  } catch (error) {
    if (error instanceof HistoryError) throw error; // answered by createApp
    throw contentError(error, workspace.store.latest(path)!);
  }
  if (format === "json") return c.json(iterationDiffToJson(diff));
  return c.body(iterationDiffText(diff), 200, {
    "content-type": "text/x-diff; charset=utf-8",
    "x-chronicle-from": String(diff.from.iteration),
    "x-chronicle-to": String(diff.to.iteration),
  });
}

/**
 * The route of a `/files/…` request, from the path exactly as sent: `new URL()` would
 * resolve `..` and `%2e%2e` segments first, and a cut at a fixed offset would then land
 * in another name. Dot segments and empty ones are refused, never resolved.
 */
function fileRoute(url: string): FileRoute {
  let route: FileRoute;
  try {
    route = parseFileRoute(rawFilesTail(url));
  } catch (error) {
    throw new HttpError(400, "bad_request", errorMessage(error));
  }
  for (const segment of route.path.split("/")) {
    if (segment === "." || segment === ".." || segment === "") {
      throw new HttpError(
        400,
        "bad_path",
        `Invalid path "${
          route.path.slice(0, 200)
        }": "." and ".." segments and empty names are refused, never resolved`,
      );
    }
  }
  return route;
}

/**
 * Runs a write, turning what the workspace refuses into a 4xx with a message that names
 * the workspace path only (never a file of the server's).
 */
async function writing<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof HttpError) throw error;
    if (error instanceof ForbiddenWriteError) throw new HttpError(409, "forbidden", error.message);
    if (error instanceof PathError) throw new HttpError(409, "bad_path", error.message);
    const refused = REFUSED_BY_DISK.find(([type]) => error instanceof type);
    if (refused) throw new HttpError(409, "conflict", refused[1]);
    if ((error as { code?: unknown } | null)?.code === "ENAMETOOLONG") {
      throw new HttpError(400, "bad_path", "A name in the path is too long for the file system");
    }
    throw error;
  }
}

/** Disk errors that mean the path cannot take the write, each with what to tell the caller. */
const REFUSED_BY_DISK: Array<[abstract new (...args: never[]) => Error, string]> = [
  [Deno.errors.IsADirectory, "A folder is in the way of the path"],
  [Deno.errors.NotADirectory, "A file is in the way: one of the path's folders is a file"],
  [Deno.errors.AlreadyExists, "Something is already in the way of the path"],
];

/** The part of a request URL after `/files/`, as sent (still percent-encoded, dots kept). */
function rawFilesTail(url: string): string {
  const afterScheme = url.indexOf("://");
  const start = url.indexOf("/", afterScheme === -1 ? 0 : afterScheme + 3);
  let path = start === -1 ? "/" : url.slice(start);
  const end = path.search(/[?#]/);
  if (end !== -1) path = path.slice(0, end);
  if (!path.startsWith("/files/")) throw new TypeError("Expected a path under /files/");
  return path.slice("/files/".length);
}

/** The normalized path; a refused one throws the `PathError` `createApp` answers 400. */
function checked(workspace: Workspace, path: string): string {
  return workspace.checkPath(path);
}

function optionalInteger(text: string | undefined, name: string, min: number): number | undefined {
  if (text === undefined || text === "") return undefined;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < min) {
    throw new HttpError(
      400,
      "bad_parameter",
      `Invalid ${name} "${text}": expected an integer >= ${min}`,
    );
  }
  return value;
}

function parseMode(text: string): number {
  if (!/^[0-7]{3,4}$/.test(text)) {
    throw new HttpError(400, "bad_parameter", `Invalid mode "${text}": expected octal like 644`);
  }
  return parseInt(text, 8);
}

/**
 * The `/files` listing: files, links and recorded folders (type `"dir"`, PROTOCOL.md §8),
 * plus folders implied by deeper paths when `depth` cuts them.
 */
function listEntries(live: Iteration[], dir: string, depth: number | undefined) {
  const base = dir === "" ? 0 : dir.split("/").length;
  const folders = new Set<string>();
  const entries: Array<Record<string, unknown>> = [];
  for (const iteration of live) {
    if (iteration.path === dir) continue; // the folder listed itself
    const segments = iteration.path.split("/");
    if (depth !== undefined && segments.length - base > depth) {
      const folder = segments.slice(0, base + Math.max(depth, 1)).join("/");
      if (!folders.has(folder) && folder !== dir) {
        folders.add(folder);
        entries.push({ path: folder, type: "dir" });
      }
      continue;
    }
    const isFolder = isFolderMode(iteration.mode);
    if (isFolder) folders.add(iteration.path);
    entries.push({
      path: iteration.path,
      type: isFolder ? "dir" : (iteration.mode & S_IFMT) === S_IFLNK ? "symlink" : "file",
      size: iteration.size,
      iteration: iteration.iteration,
      sequence: iteration.sequence,
      hash: iteration.hash,
      mode: iteration.mode,
      modified: iteration.timestamp,
    });
  }
  return entries;
}

/** One iteration as `GET /files/{path}/history` shows it (a stable JSON shape). */
export interface HistoryEntry {
  /** The iteration's number for its path, from 1. */
  iteration: number;
  /** When it was recorded, epoch ms. */
  timestamp: number;
  /** Content size in bytes. */
  size: number;
  /** SHA-256 of the content, hex. */
  hash: string;
  /** The workspace-wide sequence. */
  sequence: number;
  /** Who made it (see the README's origins). */
  origin: string;
  /** Whether it records a deletion. */
  deleted: boolean;
  /** Full POSIX mode including type bits. */
  mode: number;
}

/** One iteration as `GET /changes` shows it: its path, then as in history. */
export interface ChangeEntry extends HistoryEntry {
  /** Normalized workspace-relative path. */
  path: string;
}

/** One iteration as `GET /files/{path}/history` shows it. */
export function historyEntry(iteration: Iteration): HistoryEntry {
  return {
    iteration: iteration.iteration,
    timestamp: iteration.timestamp,
    size: iteration.size,
    hash: iteration.hash,
    sequence: iteration.sequence,
    origin: iteration.origin,
    deleted: iteration.deleted,
    mode: iteration.mode,
  };
}

/** One iteration as `GET /changes` (and `GET /events`) shows it: its path, then as in history. */
export function changeEntry(iteration: Iteration): ChangeEntry {
  return { path: iteration.path, ...historyEntry(iteration) };
}

/**
 * Streams verified content. The first verified piece is read before answering, so a
 * missing or corrupt object is reported as an error response, never served.
 */
async function contentResponse(workspace: Workspace, iteration: Iteration): Promise<Response> {
  const body = await verifiedBody(
    workspace.cas,
    iteration.hash,
    (error) => contentError(error, iteration),
    { path: iteration.path },
  );
  return new Response(body, {
    headers: {
      "content-type": "application/octet-stream",
      "content-length": String(iteration.size),
      "etag": `"${iteration.hash}"`,
      "x-chronicle-iteration": String(iteration.iteration),
      "x-chronicle-sequence": String(iteration.sequence),
    },
  });
}

function contentError(error: unknown, iteration: Iteration): HttpError {
  if (error instanceof CorruptContentError) {
    log("error", "corrupt content refused", { path: iteration.path, hash: iteration.hash });
    return new HttpError(
      500,
      "corrupt_content",
      `Stored content of "${iteration.path}" is corrupt: ${error.message}`,
    );
  }
  if (error instanceof ContentNotFoundError) {
    return new HttpError(
      500,
      "missing_content",
      `Stored content of "${iteration.path}" is missing: ${error.message}`,
    );
  }
  throw error;
}
