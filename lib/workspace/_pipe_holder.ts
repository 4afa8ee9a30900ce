import { log } from "../log/mod.ts";

/**
 * Holds every named pipe of a watched workspace open, read and write, while it is there.
 *
 * Why: Deno's file watcher (Deno 2.9, `ext/fs` `op_fs_events_open`) checks each event's path
 * against every watched path with `same_file::is_same_file`, which opens the event's path
 * for reading, without `O_NONBLOCK`. For a named pipe with no writer, that `open` waits
 * for a writer, forever: the watcher's thread (`notify-rs inotify`) stops, no event of any
 * watch comes any more, and it does so holding a lock that the next `Deno.watchFs` (a new
 * top-level folder, a watch made again) and the end of a watch wait for, which stops the
 * whole process. Every event on the pipe does it again (its creation, a writer's open,
 * write and close), so letting a writer through once frees it only until the next one.
 * Chronicle's own code never opens a special file (a walk only `lstat`s them), but it
 * cannot keep the watcher from doing so, nor ask Deno for `O_NONBLOCK`.
 *
 * A named pipe that a process holds open for writing is opened for reading at once, so
 * while it is held here the watcher's `open` never waits. On Linux, opening a pipe for
 * reading and writing never waits either (it is its own partner): that is how it is held.
 * The watcher, if it was waiting already (the pipe made while it runs is found by the next
 * scan), goes on at once. Nothing is ever read from or written to the pipe.
 *
 * What remains (see README): a reader of the pipe sees no end of file while Chronicle
 * holds it, since Chronicle counts as a writer; until a scan finds a new pipe, the watcher
 * waits and its events are late (its probe finds that within seconds and has the workspace
 * scanned: see `watch_probe.ts`); and the watcher still opens every other kind of file it
 * reports (a device included) to compare it.
 */
/**
 * Named pipes held at once, at most: each is a file descriptor, and a workspace's pipes are
 * made by whoever writes there (a sandbox's code, on a replica). Past it, a new pipe is left
 * alone and said so: the watcher may then wait on it until a writer opens it.
 */
export const PIPES_HELD_MAX = 256;

export class PipeHolder {
  readonly #root: string;
  /** Held pipes by normalized path, with their inode. */
  readonly #held = new Map<string, { file: Deno.FsFile; ino: number | null }>();
  /** Whether a pipe was left alone for want of room (said once, until room is made). */
  #full = false;

  /**
   * Makes a holder of nothing.
   *
   * @param root Absolute workspace root.
   */
  constructor(root: string) {
    this.#root = root;
  }

  /** The paths held now, for tests and status. */
  get paths(): string[] {
    return [...this.#held.keys()];
  }

  /**
   * Holds the pipes at `paths` (those already held, or no longer pipes, are left alone).
   *
   * @param paths Normalized workspace paths a look found named pipes at.
   */
  hold(paths: Iterable<string>): void {
    for (const path of paths) {
      const absolute = `${this.#root}/${path}`;
      const held = this.#held.get(path);
      if (held && sameInode(absolute, held.ino)) continue;
      if (!held && this.#held.size >= PIPES_HELD_MAX) {
        if (!this.#full) {
          log("warn", "too many named pipes to hold open: file watching may wait on the others", {
            path,
            held: PIPES_HELD_MAX,
          });
        }
        this.#full = true;
        continue;
      }
      let file: Deno.FsFile | undefined;
      try {
        // Opened only when it is a pipe now: read and write, which never waits on Linux.
        // RACE: replaced by something else between this lstat and the open; the fstat
        // below closes that at once. Opening read-write never waits for any file type
        // but a device's own driver.
        if (!Deno.lstatSync(absolute).isFifo) continue;
        file = Deno.openSync(absolute, { read: true, write: true });
        const info = file.statSync();
        if (!info.isFifo) {
          file.close();
          continue;
        }
        held?.file.close(); // another pipe under the same name: the new one is held first
        this.#held.set(path, { file, ino: info.ino });
        log("debug", "holding a named pipe open so that file watching never waits on it", {
          path,
        });
      } catch (error) {
        file?.close();
        if (!(error instanceof Deno.errors.NotFound)) {
          log("warn", "cannot hold a named pipe open", { path, error });
        }
      }
    }
  }

  /**
   * Lets go of the pipes no longer at their paths (gone, renamed, replaced), keeping
   * `found` (the pipes a whole scan found), which are held first: a pipe renamed within the
   * tree is then never without a holder while events on it can come.
   *
   * @param found Every named pipe a scan of the whole tree found.
   */
  keepOnly(found: readonly string[]): void {
    this.hold(found);
    for (const [path, held] of this.#held) {
      if (sameInode(`${this.#root}/${path}`, held.ino)) continue;
      // RACE: the pipe moved to a watched path that no scan looked at yet: its close event
      // makes the watcher wait again until the next scan holds it there.
      held.file.close();
      this.#held.delete(path);
    }
    if (this.#held.size < PIPES_HELD_MAX) this.#full = false;
  }

  /** Lets go of every pipe (once nothing watches the workspace). */
  close(): void {
    for (const held of this.#held.values()) held.file.close();
    this.#held.clear();
  }
}

/** Whether `absolute` is still the named pipe of inode `ino`. */
function sameInode(absolute: string, ino: number | null): boolean {
  try {
    const info = Deno.lstatSync(absolute);
    return info.isFifo === true && info.ino === ino;
  } catch {
    return false;
  }
}
