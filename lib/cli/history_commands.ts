import { PathError } from "../paths/mod.ts";
import { createHash } from "node:crypto";
import { ContentNotFoundError, hashFile } from "../cas/mod.ts";
import {
  isFolderMode,
  type Iteration,
  ORIGINS,
  S_IFLNK,
  S_IFMT,
  S_IFREG,
  Store,
} from "../store/mod.ts";
import type { Workspace, WorkspaceLayout } from "../workspace/mod.ts";
import { askRunning } from "./live_writes.ts";
import { restoreToCommand } from "./snapshot_commands.ts";
import { CliError, UsageError } from "./errors.ts";
import { LOCATE_ARGS, locateFromArgs, openLocatedWorkspace } from "./locate_workspace.ts";
import { formatBytes, formatMode, formatTime, printJson, println, table } from "./output.ts";
import { integerArg, parseCommandArgs } from "./parse_command_args.ts";
import { normalizeWorkspacePath } from "../paths/mod.ts";
import { parseRestorePoint } from "../snapshot/mod.ts";
import { errorMessage } from "../log/mod.ts";

const COMMON = { ...LOCATE_ARGS, json: { type: "boolean" } } as const;

function withStore<T>(layout: WorkspaceLayout, work: (store: Store) => T): T {
  const store = Store.open(layout.database);
  try {
    return work(store);
  } finally {
    store.close();
  }
}

function pathArg(command: string, positionals: string[], layout: WorkspaceLayout): string {
  const [path, extra] = positionals;
  if (path === undefined || extra !== undefined) {
    throw new UsageError(`Usage: chronicle ${command} PATH`);
  }
  try {
    return normalizeWorkspacePath(path, { dataDir: layout.dataDirInside });
  } catch (error) {
    if (error instanceof PathError) throw new CliError(error.message);
    throw error;
  }
}

/** `chronicle ls [DIR] [--at SEQ|TIME]`: the tree, now or at a sequence or a time. */
export function lsCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("ls", args, {
    ...COMMON,
    at: { type: "string" },
  });
  const layout = locateFromArgs(values);
  const dir = positionals[0] === undefined || positionals[0] === "."
    ? ""
    : pathArg("ls [DIR]", positionals, layout);
  const entries = withStore(layout, (store) => {
    const atSequence = values.at === undefined ? undefined : sequenceOf(values.at, store);
    return store.list({ dir, ...(atSequence === undefined ? {} : { atSequence }) });
  });
  if (values.json) printJson(entries);
  else if (entries.length === 0) println(dir === "" ? "no files" : `no files under ${dir}`);
  else {
    const rows = entries.map((i) => [
      formatMode(i.mode),
      formatBytes(i.size),
      `#${i.iteration}`,
      formatTime(i.timestamp),
      // A folder and a link marked as `ls -F` marks them (the exact mode: --json).
      isFolderMode(i.mode) ? `${i.path}/` : (i.mode & S_IFMT) === S_IFLNK ? `${i.path}@` : i.path,
    ]);
    for (const line of table(rows, ["MODE", "SIZE", "ITER", "MODIFIED", "PATH"])) println(line);
  }
  return Promise.resolve(0);
}

/**
 * The sequence `--at` names: a sequence number (at most the newest), or a time like
 * `restore --to` takes (a date-time, or `10m` ago), read as the newest sequence then.
 */
function sequenceOf(text: string, store: Store): number {
  let point;
  try {
    point = parseRestorePoint(text, Date.now());
  } catch (error) {
    throw new UsageError(`Invalid --at "${text}": ${errorMessage(error)}`);
  }
  const newest = store.sequence();
  if ("sequence" in point) {
    if (point.sequence > newest) {
      throw new CliError(`Sequence ${point.sequence} is beyond the newest, ${newest}`);
    }
    return point.sequence;
  }
  return store.sequenceAt(point.timestamp);
}

/** `chronicle history PATH`: every iteration of PATH. */
export function historyCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("history", args, COMMON);
  const layout = locateFromArgs(values);
  const path = pathArg("history", positionals, layout);
  const history = withStore(layout, (store) => store.history(path));
  if (history.length === 0) throw new CliError(`Unknown path "${path}"`);
  if (values.json) printJson(history);
  else {
    const rows = history.map((i) => [
      `#${i.iteration}`,
      formatTime(i.timestamp),
      i.deleted ? "deleted" : formatBytes(i.size),
      i.deleted ? "-" : i.hash.slice(0, 12),
      i.origin,
      `seq ${i.sequence}`,
    ]);
    for (const line of table(rows, ["ITER", "TIME", "SIZE", "HASH", "ORIGIN", "SEQ"])) {
      println(line);
    }
  }
  return Promise.resolve(0);
}

/** `chronicle cat PATH [--at N]`: content of PATH at iteration N (default latest). */
export async function catCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("cat", args, {
    ...LOCATE_ARGS,
    at: { type: "string" },
  });
  const layout = locateFromArgs(values);
  const path = pathArg("cat", positionals, layout);
  const n = integerArg("--at", values.at, 1);
  const { iteration, latest } = withStore(layout, (store) => {
    const latest = store.latest(path);
    return { iteration: n === undefined ? latest : store.iteration(path, n), latest };
  });
  const found = requireContent(path, n, iteration);
  const workspace = await openLocatedWorkspace(layout);
  try {
    const pieces = workspace.cas.readStream(found.hash)[Symbol.asyncIterator]();
    let first: IteratorResult<Uint8Array>;
    try {
      first = await pieces.next(); // nothing written before the content is found
    } catch (error) {
      // Not kept here (a sandbox keeps none of the master's content) and its master out of
      // reach: the latest version is the workspace's own file, when that still holds it.
      const onDisk = error instanceof ContentNotFoundError && found.sequence === latest?.sequence
        ? await unchangedOnDisk(workspace, path, found)
        : null;
      if (onDisk === null) throw error;
      await catFromDisk(onDisk, found.hash);
      return 0;
    }
    for (let piece = first; !piece.done; piece = await pieces.next()) await writeAll(piece.value);
  } catch (error) {
    throw new CliError(
      `Cannot read "${path}" iteration ${found.iteration}: ${errorMessage(error)}`,
    );
  } finally {
    await workspace.close();
  }
  return 0;
}

/**
 * The workspace's own file holding `found`, the path's latest version: a regular file whose
 * bytes hash to the version's; `null` otherwise.
 */
async function unchangedOnDisk(
  workspace: Workspace,
  path: string,
  found: Iteration,
): Promise<string | null> {
  const kind = found.mode & S_IFMT;
  if (kind !== S_IFREG && kind !== 0) return null;
  const file = `${workspace.layout.root}/${path}`;
  if (!(await Deno.lstat(file).catch(() => null))?.isFile) return null;
  const { hash } = await hashFile(file).catch(() => ({ hash: "" }));
  return hash === found.hash ? file : null;
}

/**
 * Writes the file at `file` out, checking that what was written still hashes to `hash`.
 *
 * @throws {Error} When the file changed while it was read.
 */
async function catFromDisk(file: string, hash: string): Promise<void> {
  const hasher = createHash("sha256");
  using handle = await Deno.open(file, { read: true });
  const buffer = new Uint8Array(256 * 1024);
  for (let n = await handle.read(buffer); n !== null; n = await handle.read(buffer)) {
    const piece = buffer.subarray(0, n);
    hasher.update(piece);
    await writeAll(piece);
  }
  if (hasher.digest("hex") !== hash) throw new Error("it changed on disk while it was read");
}

/** Changes `log` shows without `--limit` or `--all`: the newest ones. */
export const LOG_DEFAULT_LIMIT = 50;

/** `chronicle log [--since SEQ] [--limit N | --all]`: changes, newest last (the last 50). */
export function logCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("log", args, {
    ...COMMON,
    since: { type: "string" },
    limit: { type: "string" },
    all: { type: "boolean" },
  });
  if (positionals.length > 0) {
    throw new UsageError(`chronicle log takes no arguments, got "${positionals[0]}"`);
  }
  if (values.all && values.limit !== undefined) {
    throw new UsageError("chronicle log: give --limit N or --all, not both");
  }
  const layout = locateFromArgs(values);
  const since = integerArg("--since", values.since) ?? 0;
  const limit = values.all
    ? undefined
    : integerArg("--limit", values.limit, 1) ?? LOG_DEFAULT_LIMIT;
  const { changes, more } = withStore(layout, (store) => lastChanges(store, since, limit));
  if (values.json) printJson(changes);
  else {
    const rows = changes.map((i) => [
      String(i.sequence),
      formatTime(i.timestamp),
      i.deleted ? "deleted" : `#${i.iteration}`,
      i.origin,
      i.path,
    ]);
    if (more) println(`the last ${changes.length} changes (--all or --limit N for more)`);
    for (const line of table(rows, ["SEQ", "TIME", "ITER", "ORIGIN", "PATH"])) println(line);
  }
  return Promise.resolve(0);
}

/**
 * The last `limit` changes after `since` (all of them without a limit), and whether older
 * ones were left out, without reading the whole log: sequences may have gaps on a replica,
 * so the window widens until it holds enough.
 */
function lastChanges(
  store: Store,
  since: number,
  limit: number | undefined,
): { changes: Iteration[]; more: boolean } {
  if (limit === undefined) return { changes: store.changesSince(since), more: false };
  const newest = store.sequence();
  let from = Math.max(since, newest - limit);
  let changes = store.changesSince(from);
  while (changes.length < limit && from > since) {
    from = Math.max(since, from - Math.max(limit, newest - from));
    changes = store.changesSince(from);
  }
  const shown = changes.slice(-limit);
  const first = shown[0]?.sequence;
  const more = first !== undefined && store.changesSince(since, { limit: 1 })[0]!.sequence < first;
  return { changes: shown, more };
}

/**
 * `chronicle restore PATH --at N`: bring iteration N back as a new iteration; with `--to
 * SEQ|TIME [PATH…]`, the point-in-time restore of the whole workspace or some paths.
 */
export async function restoreCommand(args: string[]): Promise<number> {
  if (args.some((arg) => arg === "--to" || arg.startsWith("--to="))) {
    return await restoreToCommand(args);
  }
  const { values, positionals } = parseCommandArgs("restore", args, {
    ...COMMON,
    at: { type: "string" },
  });
  const layout = locateFromArgs(values);
  const path = pathArg("restore", positionals, layout);
  const n = integerArg("--at", values.at, 1);
  if (n === undefined) {
    throw new UsageError("Usage: chronicle restore PATH --at N (or --to SEQ|TIME)");
  }
  const iteration = withStore(layout, (store) => store.iteration(path, n));
  const found = requireContent(path, n, iteration);
  // The running Chronicle restores it when there is one: its watcher then never takes the
  // restored file for an edit on disk (origin "local") before it is recorded.
  const live = await askRunning<Omit<Iteration, "path">>(layout, "/restore", { path, at: n });
  const latest = live ? { path, ...live } : await restoreHere(layout, path, found);
  if (values.json) printJson(latest);
  else println(`restored ${path} from #${n} as #${latest.iteration} (seq ${latest.sequence})`);
  return 0;
}

async function restoreHere(
  layout: WorkspaceLayout,
  path: string,
  found: Iteration,
): Promise<Iteration> {
  const workspace = await openLocatedWorkspace(layout);
  try {
    const recorded = await workspace.writeContent(path, found.hash, found.mode, {
      origin: ORIGINS.restore,
    });
    return recorded ?? workspace.store.latest(path)!;
  } finally {
    await workspace.close();
  }
}

function requireContent(
  path: string,
  n: number | undefined,
  iteration: Iteration | undefined,
): Iteration {
  if (!iteration) {
    throw new CliError(
      n === undefined ? `Unknown path "${path}"` : `Unknown iteration ${n} of "${path}"`,
    );
  }
  if (iteration.deleted) {
    throw new CliError(`Iteration ${iteration.iteration} of "${path}" is a deletion`);
  }
  return iteration;
}

async function writeAll(bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) written += await Deno.stdout.write(bytes.subarray(written));
}
