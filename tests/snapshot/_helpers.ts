/**
 * Test helpers for `tests/snapshot`: a real workspace in a temp folder with a real
 * SQLite store and CAS. Internal.
 *
 * @module
 */
import { join } from "node:path";
import { Cas } from "../../lib/cas/mod.ts";
import { Store } from "../../lib/store/mod.ts";
import { Snapshots, type SnapshotsOptions } from "../../lib/snapshot/mod.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

/** A temp workspace with its store, CAS and snapshot engine. */
export interface TestWorkspace {
  /** Real path of the workspace root. */
  root: string;
  dataDir: string;
  databasePath: string;
  casDir: string;
  store: Store;
  cas: Cas;
  snapshots: Snapshots;
  /** Opens another engine on the same store and CAS with other options. */
  open(options?: Partial<SnapshotsOptions>): Snapshots;
  /** Writes a text file (creating parents). */
  write(path: string, text: string, mode?: number): Promise<void>;
  /** Reads a text file, `null` when missing. */
  read(path: string): Promise<string | null>;
  /** Whether anything (a dangling link included) is at `path`. */
  exists(path: string): Promise<boolean>;
}

/** Runs `fn` with a fresh workspace, removed afterwards. */
export function withWorkspace(
  fn: (ws: TestWorkspace) => Promise<void>,
  options: Partial<SnapshotsOptions> = {},
): Promise<void> {
  return withTempDir(async (temp) => {
    const root = join(temp, "ws");
    const dataDir = join(root, ".chronicle");
    await Deno.mkdir(dataDir, { recursive: true });
    const databasePath = join(dataDir, "chronicle.db");
    const casDir = join(dataDir, "cas");
    const store = Store.open(databasePath);
    try {
      const cas = await Cas.open(casDir);
      const open = (extra: Partial<SnapshotsOptions> = {}) =>
        Snapshots.open({ root, store, cas, ...options, ...extra });
      const ws: TestWorkspace = {
        root,
        dataDir,
        databasePath,
        casDir,
        store,
        cas,
        snapshots: open(),
        open,
        write: (path, text, mode) => writeText(join(root, path), text, mode),
        read: (path) => readOrNull(join(root, path)),
        exists: (path) => exists(join(root, path)),
      };
      await fn(ws);
    } finally {
      store.close();
      // Removable even when a test changed the folder's mode.
      await Deno.chmod(temp, 0o755).catch(() => {});
    }
  }, "chronicle-snap-");
}

/** Writes a text file (creating parents) with `mode`, whatever the umask. */
async function writeText(absolute: string, text: string, mode?: number): Promise<void> {
  await Deno.mkdir(join(absolute, ".."), { recursive: true });
  await Deno.writeTextFile(absolute, text, mode === undefined ? {} : { mode });
  if (mode !== undefined) await Deno.chmod(absolute, mode);
}

/** A text file's content, `null` when missing. */
async function readOrNull(absolute: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(absolute);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/** Whether anything (a dangling link included) is at `absolute`. */
async function exists(absolute: string): Promise<boolean> {
  try {
    await Deno.lstat(absolute);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

/** Permission bits of a path (lstat). */
export async function permissions(path: string): Promise<number> {
  return ((await Deno.lstat(path)).mode ?? 0) & 0o7777;
}
