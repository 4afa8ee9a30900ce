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
import { linkedAncestor } from "./_fs.ts";
import { lstatOrNull, syncDir, writeSymlinkAtomic } from "../disk/mod.ts";
import type { WorkspaceWriter } from "./types.ts";

/** Options for {@linkcode DiskWriter}. */
export interface DiskWriterOptions {
  /** Data folder relative to the root, refused as a target; `undefined` when outside. */
  dataDir?: string | undefined;
  /** A store to record each change in (as the running workspace would); none records nothing. */
  store?: Store | undefined;
  /** Origin of recorded changes. @default {"local"} */
  origin?: string;
}

/**
 * Changes workspace files directly and atomically (temp file + fsync + rename + fsync of
 * the folder), recording each change in a store when given one. Used by rollback and
 * restore when no running workspace (`Workspace` in `lib/workspace`) is at hand; a store
 * records a change seen twice only once, so a watcher running meanwhile does no harm.
 * Refuses paths beyond a symbolic link.
 */
export class DiskWriter implements WorkspaceWriter {
  readonly #root: string;
  readonly #cas: Cas;
  readonly #options: DiskWriterOptions;

  /**
   * @param root Absolute workspace root.
   * @param cas Where content comes from.
   * @param options Data folder, store and origin.
   */
  constructor(root: string, cas: Cas, options: DiskWriterOptions = {}) {
    this.#root = root;
    this.#cas = cas;
    this.#options = options;
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
    const normalized = await this.#check(path);
    const absolute = join(this.#root, normalized);
    await Deno.mkdir(dirname(absolute), { recursive: true });
    let size: number;
    if (isFolderMode(mode)) {
      const found = await lstatOrNull(absolute);
      if (found && !found.isDirectory) await Deno.remove(absolute);
      if (!found?.isDirectory) await Deno.mkdir(absolute);
      await Deno.chmod(absolute, mode & 0o7777);
      await syncDir(dirname(absolute));
      size = 0;
    } else if ((mode & S_IFMT) === S_IFLNK) {
      const target = await this.#cas.readBytes(hash);
      await writeSymlinkAtomic(absolute, new TextDecoder().decode(target));
      size = target.length;
    } else {
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
    const normalized = await this.#check(path);
    const absolute = join(this.#root, normalized);
    const info = await lstatOrNull(absolute);
    if (info) {
      await Deno.remove(absolute, { recursive: info.isDirectory });
      await syncDir(dirname(absolute));
    }
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
    const source = await this.#check(from);
    const target = await this.#check(to);
    if (isInside(target, source)) throw new PathError(to, `cannot move "${source}" into itself`);
    const absolute = join(this.#root, target);
    await Deno.mkdir(dirname(absolute), { recursive: true });
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

  async #check(path: string): Promise<string> {
    const normalized = normalizeWorkspacePath(path, { dataDir: this.#options.dataDir });
    const link = await linkedAncestor(this.#root, normalized);
    if (link !== undefined) {
      throw new PathError(path, `it lies beyond the symbolic link "${link}"`);
    }
    return normalized;
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
