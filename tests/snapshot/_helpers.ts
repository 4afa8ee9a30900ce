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
export async function withWorkspace(
  fn: (ws: TestWorkspace) => Promise<void>,
  options: Partial<SnapshotsOptions> = {},
): Promise<void> {
  const temp = await Deno.makeTempDir({ prefix: "chronicle-snap-" });
  const store = { current: undefined as Store | undefined };
  try {
    const root = await Deno.realPath(temp).then((real) => join(real, "ws"));
    const dataDir = join(root, ".chronicle");
    await Deno.mkdir(dataDir, { recursive: true });
    const databasePath = join(dataDir, "chronicle.db");
    const casDir = join(dataDir, "cas");
    store.current = Store.open(databasePath);
    const cas = await Cas.open(casDir);
    const open = (extra: Partial<SnapshotsOptions> = {}) =>
      Snapshots.open({ root, store: store.current!, cas, ...options, ...extra });
    const ws: TestWorkspace = {
      root,
      dataDir,
      databasePath,
      casDir,
      store: store.current,
      cas,
      snapshots: open(),
      open,
      async write(path, text, mode) {
        const absolute = join(root, path);
        await Deno.mkdir(join(absolute, ".."), { recursive: true });
        await Deno.writeTextFile(absolute, text, mode === undefined ? {} : { mode });
        if (mode !== undefined) await Deno.chmod(absolute, mode);
      },
      async read(path) {
        try {
          return await Deno.readTextFile(join(root, path));
        } catch (error) {
          if (error instanceof Deno.errors.NotFound) return null;
          throw error;
        }
      },
      async exists(path) {
        try {
          await Deno.lstat(join(root, path));
          return true;
        } catch (error) {
          if (error instanceof Deno.errors.NotFound) return false;
          throw error;
        }
      },
    };
    await fn(ws);
  } finally {
    store.current?.close();
    await Deno.chmod(temp, 0o755).catch(() => {});
    await Deno.remove(temp, { recursive: true });
  }
}

/** Permission bits of a path (lstat). */
export async function permissions(path: string): Promise<number> {
  return ((await Deno.lstat(path)).mode ?? 0) & 0o7777;
}
