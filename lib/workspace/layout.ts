import { isAbsolute, join, relative, resolve } from "node:path";

/** Where a workspace's files and Chronicle's own data live. */
export interface WorkspaceLayout {
  /** Absolute workspace root. */
  root: string;
  /** Absolute data folder (database, CAS, sockets). */
  dataDir: string;
  /** The data folder relative to the root, when it lies inside the workspace. */
  dataDirInside: string | undefined;
  /** Absolute database file. */
  database: string;
  /** Absolute CAS folder. */
  casDir: string;
  /**
   * The file whose changes probe whether the OS watcher still reports (see
   * `watch_probe.ts`): in the data folder, outside the watched tree.
   */
  watchProbe: string;
  /** The control socket every running Chronicle serves its REST API on. */
  controlSocket: string;
}

/** Options for {@linkcode resolveLayout}; relative paths resolve against the current folder. */
export interface LayoutOptions {
  /** The workspace folder. */
  root: string;
  /**
   * Database and CAS folder.
   *
   * @default {`ROOT/.chronicle`}
   */
  dataDir?: string | undefined;
  /**
   * The SQLite database file.
   *
   * @default {`DATA/chronicle.db`}
   */
  database?: string | undefined;
  /**
   * The CAS folder.
   *
   * @default {`DATA/cas`}
   */
  casDir?: string | undefined;
}

/** The name of the default data folder inside a workspace. */
export const DEFAULT_DATA_DIR = ".chronicle";

/** Resolves every location from the command-line options (SURFACES.md). */
export function resolveLayout(options: LayoutOptions): WorkspaceLayout {
  const root = resolve(options.root);
  const dataDir = resolve(options.dataDir ?? join(root, DEFAULT_DATA_DIR));
  const inside = relative(root, dataDir);
  const dataDirInside = inside !== "" && !inside.startsWith("..") && !isAbsolute(inside)
    ? inside.split("\\").join("/")
    : undefined;
  return {
    root,
    dataDir,
    dataDirInside,
    database: resolve(options.database ?? join(dataDir, "chronicle.db")),
    casDir: resolve(options.casDir ?? join(dataDir, "cas")),
    watchProbe: join(dataDir, "watch-probe"),
    controlSocket: join(dataDir, "control.sock"),
  };
}
