import { dirname, join, resolve } from "node:path";
import { columns, openDatabase } from "../db/mod.ts";
import { WORKSPACE_ROOT_META } from "../store/mod.ts";
import {
  DEFAULT_DATA_DIR,
  resolveLayout,
  Workspace,
  type WorkspaceLayout,
} from "../workspace/mod.ts";
import { CliError } from "./errors.ts";
import { runningChronicleTier } from "./running_tier.ts";

/** The options every history command accepts to find its workspace (README). */
export interface LocateOptions {
  /** `-C WORKSPACE`. */
  workspace?: string | undefined;
  /** `--data-dir DIR`. */
  dataDir?: string | undefined;
  /** `--database FILE`. */
  database?: string | undefined;
  /** `--cas-dir DIR`. */
  casDir?: string | undefined;
  /** Where the upward search starts. @default {Deno.cwd()} */
  cwd?: string;
}

/** `parseArgs` option specs for the location flags, to spread into a command's options. */
export const LOCATE_ARGS = {
  C: { type: "string" },
  "data-dir": { type: "string" },
  database: { type: "string" },
  "cas-dir": { type: "string" },
} as const;

/**
 * Finds a workspace's layout like git finds `.git`: `-C`, else the root recorded in the
 * database named by `--data-dir`/`--database`, else the nearest folder upwards from the
 * current one that holds `.chronicle/chronicle.db`.
 *
 * @throws {CliError} When no workspace is found.
 */
export function locateWorkspace(options: LocateOptions): WorkspaceLayout {
  const layoutOf = (root: string) =>
    resolveLayout({
      root,
      dataDir: options.dataDir,
      database: options.database,
      casDir: options.casDir,
    });
  if (options.workspace) return layoutOf(options.workspace);
  if (options.dataDir || options.database) {
    const database = resolve(options.database ?? join(options.dataDir!, "chronicle.db"));
    return layoutOf(recordedRoot(database) ?? dirname(dirname(database)));
  }
  let folder = resolve(options.cwd ?? Deno.cwd());
  while (true) {
    if (exists(join(folder, DEFAULT_DATA_DIR, "chronicle.db"))) return layoutOf(folder);
    const parent = dirname(folder);
    if (parent === folder) break;
    folder = parent;
  }
  throw new CliError(
    "No Chronicle workspace here or above: run chronicle WORKSPACE first, or pass -C WORKSPACE",
  );
}

/** The values `parseArgs` gives for {@linkcode LOCATE_ARGS}. */
export interface LocateValues {
  C?: string | undefined;
  "data-dir"?: string | undefined;
  database?: string | undefined;
  "cas-dir"?: string | undefined;
}

/**
 * Finds the workspace from a command's location flags, or else from `CHRONICLE_WORKSPACE`
 * and `CHRONICLE_DATA_DIR` (as set in the container images), and requires its database.
 *
 * @throws {CliError} When no workspace or no database is found.
 */
export function locateFromArgs(
  values: LocateValues,
  env: Record<string, string | undefined> = Deno.env.toObject(),
): WorkspaceLayout {
  const flagged = values.C ?? values["data-dir"] ?? values.database;
  const fromEnv = (name: string) => (flagged === undefined && env[name] ? env[name] : undefined);
  const layout = locateWorkspace({
    workspace: values.C ?? fromEnv("CHRONICLE_WORKSPACE"),
    dataDir: values["data-dir"] ?? fromEnv("CHRONICLE_DATA_DIR"),
    database: values.database,
    casDir: values["cas-dir"],
  });
  requireDatabase(layout);
  return layout;
}

/** Fails with a clear message when the layout's database does not exist yet. */
export function requireDatabase(layout: WorkspaceLayout): void {
  if (!exists(layout.database)) {
    throw new CliError(`No Chronicle database at "${layout.database}"`);
  }
}

function recordedRoot(database: string): string | undefined {
  if (!exists(database)) throw new CliError(`No Chronicle database at "${database}"`);
  const db = openDatabase(database, { readOnly: true });
  try {
    const row = db.prepare("SELECT value FROM meta WHERE key = ?").get(WORKSPACE_ROOT_META);
    return row ? columns(row).text("value") : undefined;
  } catch {
    return undefined;
  } finally {
    db.close();
  }
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Opens the located workspace, for reading content or writing through it.
 *
 * @param layout Where the workspace and its store are, from {@linkcode locateFromArgs}.
 * @returns The open workspace; the caller closes it.
 */
export async function openLocatedWorkspace(layout: WorkspaceLayout): Promise<Workspace> {
  const workspace = await Workspace.open({
    root: layout.root,
    dataDir: layout.dataDir,
    database: layout.database,
    casDir: layout.casDir,
  });
  // What this process's CAS lacks (a sandbox replica's master content) is read through
  // the running Chronicle, which reaches the master.
  workspace.cas.setTier(runningChronicleTier(layout));
  return workspace;
}
