import { dirname, join } from "node:path";
import type { Cas } from "../cas/mod.ts";
import { isInside, normalizeWorkspacePath, PathError } from "../paths/mod.ts";
import type { Store } from "../store/mod.ts";
import {
  isFolderMode,
  type Iteration,
  type NewIteration,
  S_IFLNK,
  S_IFMT,
  S_IFREG,
} from "../store/mod.ts";
import { lstatOrNullSync, syncDir } from "../disk/mod.ts";
import { type DiskHooks, WorkspaceDisk } from "../workspace/mod.ts";
import type { WorkspaceWriter } from "./types.ts";

/** Options for {@linkcode DiskWriter}. */
export interface DiskWriterOptions {
  /** Data folder relative to the root, refused as a target; `undefined` when outside. */
  dataDir?: string | undefined;
  /** A store to record each change in (as the running workspace would); none records nothing. */
  store?: Store | undefined;
  /** Origin of recorded changes. @default {"local"} */
  origin?: string;
  /** Hooks that change the disk underneath the executor, for tests. @default {{}} */
  hooks?: DiskHooks;
}

/**
 * Changes workspace files directly and atomically (temp file + fsync + rename + fsync of
 * the folder), recording each change in a store when given one. Used by rollback and
 * restore when no running workspace (`Workspace` in `lib/workspace`) is at hand; a store
 * records a change seen twice only once, so a watcher running meanwhile does no harm.
 * Every change goes through the workspace's one disk executor (`WorkspaceDisk` in
 * `lib/workspace`): paths beyond a symbolic link, links leading out of the workspace and
 * mode changes of links are refused.
 */
export class DiskWriter implements WorkspaceWriter {
  readonly #root: string;
  readonly #cas: Cas;
  readonly #options: DiskWriterOptions;
  /** The workspace's one disk executor: its link, mode and parent rules. */
  readonly #disk: WorkspaceDisk;

  /**
   * Makes a writer for the workspace at `root`.
   *
   * @param root Absolute workspace root.
   * @param cas Where content comes from.
   * @param options Data folder, store and origin.
   */
  constructor(root: string, cas: Cas, options: DiskWriterOptions = {}) {
    this.#root = root;
    this.#cas = cas;
    this.#options = options;
    this.#disk = new WorkspaceDisk(root, options.hooks ? { hooks: options.hooks } : {});
  }

  /**
   * Writes content from the CAS to `path` with the full `mode`: a symbolic link when the
   * mode has S_IFLNK bits (the content is its target), else a file with the mode's
   * permission bits; a folder (with its permission bits) when the mode has the folder type
   * bits (PROTOCOL.md §8), replacing a file or link there. Creates missing parent
   * folders; a folder in the way of a file is an error.
   *
   * @returns The recorded iteration, or `undefined` without a store or when nothing changed.
   * @throws {PathError} For an unsafe path or one beyond a symbolic link.
   * @throws {ContentNotFoundError} When the content is not in the CAS.
   */
  async writeContent(
    path: string,
    hash: string,
    mode: number,
    options: { origin?: string } = {},
  ): Promise<Iteration | undefined> {
    const normalized = this.#check(path);
    let size: number;
    if (isFolderMode(mode)) {
      // Through the executor too: no folder is made, emptied or given a mode through a link.
      const absolute = this.#disk.absolute(normalized);
      const found = lstatOrNullSync(absolute);
      if (found && !found.isDirectory) await this.#disk.remove(normalized, { recursive: false });
      await this.#disk.mkdir(normalized);
      await this.#disk.chmod(normalized, mode);
      await syncDir(dirname(absolute));
      size = 0;
    } else if ((mode & S_IFMT) === S_IFLNK) {
      const target = await this.#cas.readBytes(hash);
      await this.#disk.writeLink(normalized, new TextDecoder().decode(target));
      size = target.length;
    } else {
      const absolute = await this.#disk.prepareFile(normalized);
      await this.#cas.writeTo(hash, absolute, { mode });
      size = (await this.#cas.objectSize(hash)) ?? 0;
    }
    const fullMode = (mode & S_IFMT) === 0 ? S_IFREG | mode : mode;
    return this.#record(
      [{ path: normalized, hash, size, mode: fullMode, deleted: false }],
      options,
    )[0];
  }

  /**
   * Stores `bytes` in the CAS and writes them to `path`.
   *
   * @returns The recorded iteration, or `undefined`.
   */
  async writeBytes(
    path: string,
    bytes: Uint8Array,
    options: { mode?: number; origin?: string } = {},
  ): Promise<Iteration | undefined> {
    const stored = await this.#cas.putBytes(bytes);
    const mode = options.mode ?? 0o100644;
    return await this.writeContent(path, stored.hash, mode, { ...options });
  }

  /**
   * Removes a file or link, or a folder with everything in it; nothing there is no error.
   *
   * @returns The deletion recorded for `path`, or `undefined`.
   */
  async remove(path: string, options: { origin?: string } = {}): Promise<Iteration | undefined> {
    const normalized = this.#check(path);
    const absolute = join(this.#root, normalized);
    if (await this.#disk.remove(normalized)) await syncDir(dirname(absolute));
    const gone = this.#livePaths(normalized).reverse().map((p) => deletion(p)); // children first
    const recorded = this.#record(gone, options);
    return recorded.find((iteration) => iteration.path === normalized);
  }

  /**
   * Renames a file, link or folder (replacing a file at `to`).
   *
   * @returns The recorded deletions and creations.
   */
  async move(from: string, to: string, options: { origin?: string } = {}): Promise<Iteration[]> {
    const source = this.#check(from);
    const target = this.#check(to);
    if (isInside(target, source)) throw new PathError(to, `cannot move "${source}" into itself`);
    const absolute = join(this.#root, target);
    this.#disk.checkParents(source);
    this.#disk.makeParents(target);
    await Deno.rename(join(this.#root, source), absolute);
    await syncDir(dirname(absolute));
    if (dirname(source) !== dirname(target)) await syncDir(dirname(join(this.#root, source)));
    const created: NewIteration[] = [];
    const gone: NewIteration[] = [];
    const store = this.#options.store;
    for (const path of this.#livePaths(source)) {
      const latest = store!.latest(path)!;
      const moved = target + path.slice(source.length);
      created.push({
        path: moved,
        hash: latest.hash,
        size: latest.size,
        mode: latest.mode,
        deleted: false,
      });
      gone.push(deletion(path));
    }
    // Deletions children first, then creations parents first (PROTOCOL.md §8).
    return this.#record([...gone.reverse(), ...created], options);
  }

  /** Normalizes a path; the executor checks what lies on the way when it acts. */
  #check(path: string): string {
    return normalizeWorkspacePath(path, { dataDir: this.#options.dataDir });
  }

  #livePaths(path: string): string[] {
    const store = this.#options.store;
    if (!store) return [];
    return store.list({ dir: path }).map((iteration) => iteration.path);
  }

  #record(changes: NewIteration[], options: { origin?: string }): Iteration[] {
    const store = this.#options.store;
    if (!store || changes.length === 0) return [];
    const origin = options.origin ?? this.#options.origin ?? "local";
    return store.record(changes.map((change) => ({ ...change, origin })));
  }
}

function deletion(path: string): NewIteration {
  return { path, hash: "", size: 0, mode: 0, deleted: true };
}
