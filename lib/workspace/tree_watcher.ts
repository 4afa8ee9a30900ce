import { log } from "../log/mod.ts";
import { WatchThread } from "./_watch_thread.ts";

/** One change the OS reported, with absolute paths. */
export type TreeEvent = Deno.FsEvent;

/**
 * What the watcher does with one event: `rescan` when events were lost (a `rescan` flag,
 * or an event of no known kind: the kernel's queue overflowed, or Deno's own, which holds
 * few events and drops the rest while the event loop is busy, as many files change during
 * a long synchronous step), `closed` when a writer closed a file with capture on close (its
 * write is complete), `changed` otherwise.
 */
export type TreeEventAction = "rescan" | "closed" | "changed";

/**
 * Decides what the watcher does with one event (see {@linkcode TreeEventAction}). Pure.
 *
 * @param event The event's kind and flag.
 * @param captureOnClose Whether a closed file is recorded without waiting for quiet.
 * @returns The action.
 * @example
 * ```ts
 * treeEventAction({ kind: "other", flag: "rescan" }, true); // "rescan"
 * ```
 */
export function treeEventAction(
  event: Pick<Deno.FsEvent, "kind" | "flag">,
  captureOnClose: boolean,
): TreeEventAction {
  if (event.flag === "rescan" || event.kind === "other") return "rescan";
  // Reads report nothing; "access" is a writer closing the file.
  return event.kind === "access" && captureOnClose ? "closed" : "changed";
}

/**
 * Whether an event the root's watch reports is only about what lies inside top-level
 * folders, which their own recursive watches report too: Deno hands every event to each
 * watch whose path is a prefix of the event's, the root's non-recursive one included, so
 * without this each change in a folder would be handled twice. Pure.
 *
 * @param root Absolute workspace root.
 * @param paths The event's absolute paths (none for a report of lost events).
 * @returns `true` when every path lies inside a top-level folder of `root`.
 * @example
 * ```ts
 * onlyInsideTopFolders("/ws", ["/ws/src/a.ts"]); // true: the watch of src/ reports it
 * onlyInsideTopFolders("/ws", ["/ws/src"]); // false: the root's own entry
 * ```
 */
export function onlyInsideTopFolders(root: string, paths: readonly string[]): boolean {
  const prefix = `${root}/`;
  return paths.length > 0 &&
    paths.every((path) => path.startsWith(prefix) && path.indexOf("/", prefix.length) !== -1);
}

/** A watch that ended this long after its last failure starts its delays over, ms. */
const FAILURES_FORGOTTEN_MS = 60_000;

/**
 * How long a watch that ended with an error waits before it is made again, given its
 * failures in a row: 100 ms, doubling, at most 30 s. Pure.
 *
 * @param failures Failures in a row, from 1.
 * @returns The delay, ms.
 * @example
 * ```ts
 * retryDelayMs(1); // 100
 * retryDelayMs(20); // 30000
 * ```
 */
export function retryDelayMs(failures: number): number {
  return Math.min(100 * 2 ** Math.max(0, failures - 1), 30_000);
}

/**
 * Watches a workspace without ever watching Chronicle's data folder.
 *
 * Why not one recursive `Deno.watchFs(root)`: with the live SQLite database inside the
 * watched tree, the process loses SQLite's POSIX file locks, so another process opening
 * and closing the database believes it is the last connection and deletes the WAL that
 * this process is still writing (commits become invisible to others and are lost on
 * `kill -9`). So the root is watched non-recursively, and each top-level folder that is
 * not excluded gets its own recursive watch, added and dropped as folders come and go.
 *
 * The watches live on a worker thread (`WatchThread`), which reads their events as they
 * come: read on a busy main thread, thousands of them were lost in a large change. What
 * the kernel's own queue drops when Deno's reader falls far behind is not reported (Deno
 * 2.9 filters out the overflow's event, which names no path): the safety rescans
 * (`WatchOptions.rescanMs`) find it.
 */
export class TreeWatcher {
  readonly #root: string;
  readonly #excluded: (name: string) => boolean;
  readonly #onEvent: (event: TreeEvent) => void;
  readonly #backlog: number | undefined;
  #thread: WatchThread | undefined;
  /** The names watched, or asked to be ("" for the root). */
  readonly #watched = new Set<string>();
  /** The watches that ended with an error, by name: their failures in a row, and when. */
  readonly #failures = new Map<string, { count: number; at: number }>();
  /** The timers that make ended watches again. */
  readonly #retries = new Set<ReturnType<typeof setTimeout>>();
  #closed = false;

  /**
   * @param root Absolute workspace root.
   * @param excluded Whether a top-level folder name must never be watched (data folder, `.git`).
   * @param backlog Events handed over and not handled yet, at most (see `WatchThread`).
   * @param onEvent Called for every event, in the order each watch reports them.
   */
  constructor(
    root: string,
    excluded: (name: string) => boolean,
    backlog: number | undefined,
    onEvent: (event: TreeEvent) => void,
  ) {
    this.#root = root;
    this.#excluded = excluded;
    this.#backlog = backlog;
    this.#onEvent = onEvent;
  }

  /**
   * Starts watching the root and every top-level folder; resolves once they all report
   * events. The folders already there are not reported: what changed in them before their
   * watch existed is the caller's to find by a scan after this (a report of each would have
   * it captured whole, a large tree at once).
   */
  async start(): Promise<void> {
    this.#thread = this.#startThread();
    const made: Promise<unknown>[] = [this.#watch("", false)];
    for await (const entry of Deno.readDir(this.#root)) {
      if (entry.isDirectory) made.push(this.#syncFolder(entry.name, false));
    }
    await Promise.all(made);
  }

  /** Stops every watch and the thread that holds them. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const timer of this.#retries) clearTimeout(timer);
    this.#retries.clear();
    this.#watched.clear();
    await this.#thread?.close();
  }

  #startThread(): WatchThread {
    const thread: WatchThread = new WatchThread(this.#backlog, {
      events: (batch) => {
        for (const { id, event } of batch) this.#dispatch(id, event);
      },
      ended: (id, message) => this.#ended(id, message),
      failed: (message) => {
        if (this.#thread === thread) this.#threadFailed(message);
      },
    });
    return thread;
  }

  #dispatch(name: string, event: TreeEvent): void {
    if (this.#closed) return;
    if (name === "" && event.flag !== "rescan") {
      this.#onRootEvent(event);
      // The folder's own watch reports it.
      if (onlyInsideTopFolders(this.#root, event.paths)) return;
    }
    this.#onEvent(event);
  }

  /** Watches `name` ("" for the root); `true` once it reports events. */
  async #watch(name: string, recursive: boolean): Promise<boolean> {
    const thread = this.#thread;
    if (this.#closed || !thread || this.#watched.has(name)) return false;
    this.#watched.add(name);
    const result = await thread.watch(
      name,
      name === "" ? this.#root : `${this.#root}/${name}`,
      recursive,
    );
    if (result.ok) return true;
    if (this.#thread === thread) this.#watched.delete(name);
    if (!result.notFound && !this.#closed) {
      log("warn", "cannot watch folder", { name, error: result.message });
    }
    return false;
  }

  /**
   * A watch ended with an error (Deno ends a watch when an event's path is not UTF-8, say):
   * what it covered is no longer watched. Its events from now until it is made again are
   * lost, and reported so (a `rescan` event: the caller scans). It is made again after a
   * delay that doubles while it keeps failing ({@linkcode retryDelayMs}), so a name that
   * stays and keeps changing costs a rescan now and then, never a loop.
   */
  #ended(name: string, error: string): void {
    if (this.#closed) return;
    this.#watched.delete(name);
    this.#retryLater(name, "folder watch ended: made again, and the workspace scanned", error);
  }

  /** The thread failed: every watch is made again, on a new thread, after a delay. */
  #threadFailed(error: string): void {
    if (this.#closed) return;
    this.#watched.clear();
    this.#thread = undefined;
    this.#retryLater(null, "watch thread failed: started again, and the workspace scanned", error);
  }

  /**
   * Reports the loss, and makes the watch of `name` again after its delay (`null`: a new
   * thread, and every watch).
   */
  #retryLater(name: string | null, what: string, error: string): void {
    const key = name ?? "/thread"; // no folder name holds a slash
    const now = Date.now();
    const before = this.#failures.get(key);
    const count = before && now - before.at < FAILURES_FORGOTTEN_MS ? before.count + 1 : 1;
    this.#failures.set(key, { count, at: now });
    const delayMs = retryDelayMs(count);
    log("warn", what, { name: name === "" ? "." : name ?? undefined, error, retryMs: delayMs });
    this.#onEvent({ kind: "other", paths: [], flag: "rescan" } as TreeEvent);
    const timer = setTimeout(() => {
      this.#retries.delete(timer);
      if (this.#closed) return;
      if (name === null) this.#thread = this.#startThread();
      if (name === null || name === "") this.#watchRootAgain();
      else this.#syncFolder(name, false); // gone or excluded since: not watched
      // What changed while it was not watched: the scan after the retry finds it.
      this.#onEvent({ kind: "other", paths: [], flag: "rescan" } as TreeEvent);
    }, delayMs);
    this.#retries.add(timer);
  }

  /** Makes the root's watch again, and those of top-level folders made meanwhile. */
  #watchRootAgain(): void {
    this.#watch("", false);
    try {
      for (const entry of Deno.readDirSync(this.#root)) {
        if (entry.isDirectory) this.#syncFolder(entry.name, false);
      }
    } catch (error) {
      log("warn", "cannot list the workspace's folders", { error });
    }
  }

  /** Keeps one recursive watch per top-level folder in step with what the root holds. */
  #onRootEvent(event: TreeEvent): void {
    for (const path of event.paths) {
      if (!path.startsWith(this.#root + "/")) continue;
      const name = path.slice(this.#root.length + 1);
      if (name.includes("/")) continue;
      this.#syncFolder(name);
    }
  }

  async #syncFolder(name: string, report = true): Promise<void> {
    if (this.#excluded(name)) return;
    let isDirectory = false;
    try {
      isDirectory = Deno.lstatSync(`${this.#root}/${name}`).isDirectory;
    } catch { /* gone: drop its watch below */ }
    const watched = this.#watched.has(name);
    if (isDirectory && !watched) {
      // Files created before the watch existed would go unseen: the folder itself is
      // reported once its watch reports events.
      const made = await this.#watch(name, true);
      if (made && report && !this.#closed) {
        this.#onEvent({ kind: "create", paths: [`${this.#root}/${name}`] } as TreeEvent);
      }
    } else if (!isDirectory && watched) {
      this.#watched.delete(name);
      this.#thread?.unwatch(name);
    }
  }
}
