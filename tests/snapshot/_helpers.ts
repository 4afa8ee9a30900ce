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
import { lstatOrNull } from "../../lib/disk/mod.ts";
import { put, readText, withTempDir } from "../_helpers/temp_dir.ts";

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
  /** Reads a text file, `undefined` when missing. */
  read(path: string): Promise<string | undefined>;
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
        write: (path, text, mode) => put(root, path, text, mode),
        read: (path) => readText(join(root, path)),
        exists: async (path) => (await lstatOrNull(join(root, path))) !== null,
      };
      await fn(ws);
    } finally {
      store.close();
      // Removable even when a test changed the folder's mode.
      await Deno.chmod(temp, 0o755).catch(() => {});
    }
  }, "chronicle-snap-");
}

/** Permission bits of a path (lstat). */
export async function permissions(path: string): Promise<number> {
  return ((await Deno.lstat(path)).mode ?? 0) & 0o7777;
}
