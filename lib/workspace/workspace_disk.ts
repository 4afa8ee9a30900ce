import { dirname } from "node:path";
import {
  type DiskStamp,
  expectStamp,
  isMissing,
  lstatOrNullSync,
  syncDir,
  writeSymlinkAtomic,
} from "../disk/mod.ts";
import { parentOf, PathError } from "../paths/mod.ts";
import { linkTargetProblem } from "./write_rules.ts";

/** What a {@linkcode WorkspaceDisk} is about to do to a path (see {@linkcode DiskHooks}). */
export type DiskOperation = "write" | "link" | "chmod" | "remove" | "mkdir" | "rename";

/**
 * Test hooks: each runs before the operation's checks, so a test can change the disk
 * underneath (swap a folder for a link, a file for a link) exactly where a concurrent
 * writer would, and see that the checks catch it.
 */
export interface DiskHooks {
  /** Called with the workspace path and the operation, before any check. @default {undefined} */
  beforeCheck?: (path: string, operation: DiskOperation) => void | Promise<void>;
  /**
   * Called with the workspace path once a change of `Workspace.applyChanges` is made and
   * before it is recorded, where someone else's change right after it would land.
   * @default {undefined}
   */
  afterChange?: (path: string) => void | Promise<void>;
  /**
   * Called with the workspace paths of `Workspace.applyChanges`'s changes once it looked
   * at them a last time, right before it records them: someone else's change landing
   * there is recorded as theirs. @default {undefined}
   */
  beforeRecord?: (paths: string[]) => void | Promise<void>;
}

/**
 * Folders a batch of changes found to be folders (or made), by workspace path, each with
 * the device it is on (`Deno.FileInfo.dev`, from the same look): the batch then flushes
 * each file system it wrote to without looking at its folders again.
 */
export type CheckedFolders = Map<string, number>;

/** Options for {@linkcode WorkspaceDisk}. */
export interface WorkspaceDiskOptions {
  /** Hooks for tests. @default {{}} */
  hooks?: DiskHooks;
}

/**
 * A write the workspace's rules refuse (a link followed, a link target leaving the
 * workspace): the sender asked for something forbidden, as opposed to a path that is
 * malformed (`PathError`).
 */
export class ForbiddenWriteError extends Error {
  /** The workspace path. */
  readonly path: string;
  /**
   * Makes the error.
   *
   * @param path The workspace path.
   * @param problem What is forbidden, in words.
   */
  constructor(path: string, problem: string) {
    super(`Refused to change "${path.slice(0, 200)}": ${problem}`);
    this.name = "ForbiddenWriteError";
    this.path = path;
  }
}

/**
 * The one executor that changes a workspace's disk: every writer (the workspace's
 * write-through API used by replica apply, write-back and REST; snapshot rollback and
 * restore; checkpoint rehydrate) makes its folders, links, mode changes and removals
 * here, under one set of rules:
 *
 * - never through a link: a parent folder that is a link (or a file) refuses the change;
 * - never following a final link: a mode change of a link is refused;
 * - a link's target is relative and stays inside the workspace (`linkTargetProblem`).
 *
 * Regular files are written by the CAS (`Cas.writeTo`: temp file, fsync, rename) after
 * {@linkcode WorkspaceDisk.prepareFile}; a rename replaces a link at the destination, it
 * never writes through it.
 *
 * RACE: each check looks at the disk microseconds before the call that acts on it; a
 * process swapping a folder for a link in between could still redirect that call. On the
 * master only processes of the trusted agent host can change its disk (a sandbox reaches
 * it only through write-backs, applied one at a time through this executor), so the
 * window is not open to the untrusted side.
 */
export class WorkspaceDisk {
  readonly #root: string;
  readonly #hooks: DiskHooks;

  /**
   * Makes an executor for one workspace.
   *
   * @param root Absolute workspace root.
   * @param options Hooks for tests.
   */
  constructor(root: string, options: WorkspaceDiskOptions = {}) {
    this.#root = root;
    this.#hooks = options.hooks ?? {};
  }

  /** The workspace root (absolute). */
  get root(): string {
    return this.#root;
  }

  /**
   * The absolute path of a normalized workspace path.
   *
   * @param path A normalized workspace path.
   * @returns The path under the root.
   */
  absolute(path: string): string {
    return path === "" ? this.#root : `${this.#root}/${path}`;
  }

  /**
   * Runs the `afterChange` hook (see {@linkcode DiskHooks}), if any.
   *
   * @param path The workspace path changed.
   */
  async changed(path: string): Promise<void> {
    await this.#hooks.afterChange?.(path);
  }

  /**
   * Runs the `beforeRecord` hook (see {@linkcode DiskHooks}), if any.
   *
   * @param paths The workspace paths about to be recorded.
   */
  async recording(paths: string[]): Promise<void> {
    await this.#hooks.beforeRecord?.(paths);
  }

  /**
   * Refuses a path beyond a link (or a file): a linked folder could lead out of the
   * workspace.
   *
   * @param path A normalized workspace path.
   * @param checked Folders a batch of changes found to be folders already (see
   * {@linkcode WorkspaceDisk.makeFolder}): not looked at again; those found now are added,
   * with their device.
   * @returns Whether every parent folder exists.
   * @throws {PathError} When a parent is a link or a file.
   */
  checkParents(path: string, checked?: CheckedFolders): boolean {
    let current = "";
    for (const segment of path.split("/").slice(0, -1)) {
      current = current === "" ? segment : `${current}/${segment}`;
      if (checked?.has(current)) continue;
      const info = lstatOrNullSync(this.absolute(current));
      if (info === null) return false;
      if (!info.isDirectory) {
        const what = info.isSymlink ? "a symbolic link" : "not a folder";
        throw new PathError(path, `"${current}" is ${what} (links are never followed)`);
      }
      checked?.set(current, info.dev);
    }
    return true;
  }

  /**
   * Makes the parent folders of `path`, refusing to go through a link.
   *
   * @param path A normalized workspace path.
   * @param checked See {@linkcode WorkspaceDisk.checkParents}.
   * @throws {PathError} When a parent is a link or a file.
   */
  makeParents(path: string, checked?: CheckedFolders): void {
    const parent = parentOf(path);
    if (parent === "" || this.checkParents(path, checked)) return;
    // RACE: a parent made by someone else meanwhile is fine (recursive); one swapped for
    // a link meanwhile is the executor's general window (see the class doc).
    Deno.mkdirSync(this.absolute(parent), { recursive: true });
    this.checkParents(path, checked); // what now exists on the way is a folder
  }

  /**
   * Checks a regular file's write: runs the hook, makes the parent folders (no links on
   * the way). The caller then writes through the CAS.
   *
   * @param path A normalized workspace path.
   * @param checked See {@linkcode WorkspaceDisk.checkParents}.
   * @returns The absolute destination.
   * @throws {PathError} When a parent is a link or a file.
   */
  async prepareFile(path: string, checked?: CheckedFolders): Promise<string> {
    await this.#hooks.beforeCheck?.(path, "write");
    this.makeParents(path, checked);
    return this.absolute(path);
  }

  /**
   * Creates or replaces `path` with a link to `target`, atomically.
   *
   * @param path A normalized workspace path.
   * @param target The link's target: relative, staying inside the workspace.
   * @param options `createOnly`: fail with `AlreadyExists` when anything is there;
   * `syncFolder`: fsync the folder after (default true); `unchangedSince`: replace only
   * what has that stamp (see `expectStamp`).
   * @throws {ForbiddenWriteError} When the target is absolute or leaves the workspace.
   * @throws {PathError} When a parent is a link or a file.
   * @throws {ChangedOnDiskError} When what is there no longer has `unchangedSince`.
   */
  async writeLink(
    path: string,
    target: string,
    options: { createOnly?: boolean; syncFolder?: boolean; unchangedSince?: DiskStamp } = {},
  ): Promise<void> {
    await this.#hooks.beforeCheck?.(path, "link");
    const problem = linkTargetProblem(path, target);
    if (problem !== null) throw new ForbiddenWriteError(path, `a symbolic link: ${problem}`);
    this.makeParents(path);
    const absolute = this.absolute(path);
    // RACE: a write between this last look and the rename is still replaced (microseconds).
    if (options.unchangedSince && !options.createOnly) {
      expectStamp(absolute, options.unchangedSince);
    }
    if (options.createOnly) {
      Deno.symlinkSync(target, absolute);
      if (options.syncFolder ?? true) await syncDir(dirname(absolute));
    } else {
      await writeSymlinkAtomic(absolute, target, { syncFolder: options.syncFolder ?? true });
    }
  }

  /**
   * Sets the permission bits of a file or folder, never of a link: a link's mode means
   * nothing, and changing it would change what it points at.
   *
   * @param path A normalized workspace path.
   * @param mode The mode; only its permission bits (0o7777) are used.
   * @throws {ForbiddenWriteError} When `path` is a link.
   * @throws {PathError} When a parent is a link or a file.
   * @throws {Deno.errors.NotFound} When nothing is at `path`.
   */
  async chmod(path: string, mode: number): Promise<void> {
    await this.#hooks.beforeCheck?.(path, "chmod");
    this.checkParents(path);
    const absolute = this.absolute(path);
    const info = Deno.lstatSync(absolute);
    if (info.isSymlink) {
      throw new ForbiddenWriteError(
        path,
        "a symbolic link's mode is never changed (that would change the file it points at)",
      );
    }
    // RACE: see the class doc (a link put here since the lstat would be followed).
    await Deno.chmod(absolute, mode & 0o7777);
  }

  /**
   * Removes a file, a link (never what it points at), or a folder with everything in
   * it; nothing there is no error.
   *
   * @param path A normalized workspace path.
   * @param options `recursive` (default true): a folder with what it holds; false: only
   * a file, a link or an empty folder. `unchangedSince`: remove a file or link only if it
   * still has that stamp (see `expectStamp`).
   * @returns Whether something was removed.
   * @throws {PathError} When a parent is a link or a file.
   * @throws {ChangedOnDiskError} When what is there no longer has `unchangedSince`.
   */
  async remove(
    path: string,
    options: { recursive?: boolean; unchangedSince?: DiskStamp } = {},
  ): Promise<boolean> {
    await this.#hooks.beforeCheck?.(path, "remove");
    if (!this.checkParents(path)) return false;
    // RACE: a write between this last look and the removal is still lost (microseconds).
    if (options.unchangedSince) expectStamp(this.absolute(path), options.unchangedSince);
    try {
      // Deno.remove never follows a final link: it unlinks it.
      await Deno.remove(this.absolute(path), { recursive: options.recursive ?? true });
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
  }

  /**
   * Moves a file, link or folder, never through a link (the hook runs with the source's
   * path). Stamps given are looked for at the last moment (see `expectStamp`): a source
   * or target changed since its caller looked is left as it is.
   *
   * @param from A normalized workspace path.
   * @param to A normalized workspace path, not inside `from`.
   * @param options `sourceUnchangedSince`: the file or link seen at `from`;
   * `targetUnchangedSince`: the file or link seen at `to`, `null` for nothing there.
   * @throws {PathError} When a parent is a link or a file.
   * @throws {ChangedOnDiskError} When either path no longer has its stamp.
   */
  async rename(
    from: string,
    to: string,
    options: { sourceUnchangedSince?: DiskStamp; targetUnchangedSince?: DiskStamp | null } = {},
  ): Promise<void> {
    await this.#hooks.beforeCheck?.(from, "rename");
    this.checkParents(from);
    this.makeParents(to);
    // RACE: a write between these last looks and the rename is still moved or replaced
    // (microseconds); a folder's stamp is never given (its time changes with what it holds).
    const { sourceUnchangedSince: source, targetUnchangedSince: target } = options;
    if (source) expectStamp(this.absolute(from), source);
    if (target !== undefined) expectStamp(this.absolute(to), target);
    Deno.renameSync(this.absolute(from), this.absolute(to));
  }

  /**
   * Makes a folder (and its parents) with exactly `mode`'s permission bits, or gives the
   * folder there those bits, never through a link: what {@linkcode WorkspaceDisk.mkdir}
   * then {@linkcode WorkspaceDisk.chmod} do, in fewer calls (one walk of the parents, no
   * chmod when the bits are already right), since a replica makes thousands of folders
   * in an initial sync.
   *
   * A batch making many folders passes one `checked` set to every call: a parent found to
   * be a folder (or made one) by an earlier call of the batch is not looked at again, as
   * siblings' files share one check of their folder (an initial sync makes thousands of
   * folders, each deeper than the last; each walk of its parents is an lstat per level).
   *
   * @param path A normalized workspace path.
   * @param mode The mode; only its permission bits (0o7777) are used.
   * @param checked Folders of the batch found to be folders (see
   * {@linkcode WorkspaceDisk.checkParents}); `path` is added once it is one.
   * @throws {PathError} When a parent is a link or a file, or `path` is not a folder.
   */
  async makeFolder(path: string, mode: number, checked?: CheckedFolders): Promise<void> {
    await this.#hooks.beforeCheck?.(path, "mkdir");
    this.makeParents(path, checked);
    const absolute = this.absolute(path);
    const bits = mode & 0o7777;
    try {
      // Made with its bits less the umask; set exactly below when they differ.
      Deno.mkdirSync(absolute, { mode: bits & 0o777 });
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
    }
    const info = lstatOrNullSync(absolute);
    if (!info?.isDirectory) throw new PathError(path, "not a folder (links are never followed)");
    // RACE: see the class doc (a link put here since the lstat would be followed).
    if (((info.mode ?? 0) & 0o7777) !== bits) Deno.chmodSync(absolute, bits);
    checked?.set(path, info.dev);
  }

  /**
   * Makes a folder (and its parents), never through a link.
   *
   * @param path A normalized workspace path.
   * @throws {PathError} When a parent is a link or a file, or `path` is not a folder.
   */
  async mkdir(path: string): Promise<void> {
    await this.#hooks.beforeCheck?.(path, "mkdir");
    this.makeParents(path);
    Deno.mkdirSync(this.absolute(path), { recursive: true });
    if (!lstatOrNullSync(this.absolute(path))?.isDirectory) {
      throw new PathError(path, "not a folder (links are never followed)");
    }
  }
}
