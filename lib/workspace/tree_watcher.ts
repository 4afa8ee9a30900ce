import { lstatOrNullSync } from "../disk/mod.ts";
import { log } from "../log/mod.ts";
import { WatchThread } from "./_watch_thread.ts";
import { onlyInsideTopFolders, retryDelayMs, type TreeEvent } from "./tree_events.ts";
import {
  PROBE_TICK_MS,
  type ProbeInput,
  probeStart,
  type ProbeState,
  probeStep,
} from "./watch_probe.ts";

/** What the watcher reports when events were (or may have been) lost: the caller scans. */
const LOST = { kind: "other", paths: [], flag: "rescan" } as TreeEvent;

/** The probe's watch id: no folder name holds a slash. */
const PROBE_ID = "/probe";

/**
 * The id of the watch that catches links to outside the workspace (see
 * {@linkcode TreeWatcher}).
 */
const LINKS_ID = "/links";

/** A watch that ended this long after its last failure starts its delays over, ms. */
const FAILURES_FORGOTTEN_MS = 60_000;

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
 *
 * Deno passes an event on to a watch only when the event's path, its link resolved, lies
 * under the watch's path: a link made to something outside the workspace (a venv's
 * `bin/python`, to `/usr/bin/python3`) is reported to none of the workspace's watches. But
 * every watch of a process is handed every event the process's watches see, matched against
 * its path: so on Linux one more watch, of `/` (not recursive: only `/`'s own entries are
 * watched there), is handed them all, and passes on those of links in the workspace (its
 * thread looks at each path). A link to inside the workspace then comes twice, which costs
 * nothing more (the debouncer holds each path once).
 *
 * Given a probe file (in the data folder), it also finds out when the watcher stops
 * reporting altogether (see `watch_probe.ts`), and reports that as lost events: the scan
 * that follows holds the named pipe the watcher waits on, and records what it missed.
 */
export class TreeWatcher {
  readonly #root: string;
  readonly #excluded: (name: string) => boolean;
  readonly #onEvent: (event: TreeEvent) => void;
  readonly #backlog: number | undefined;
  /** The probe file's absolute path, if the watcher is probed. */
  readonly #probe: string | undefined;
  #probeState: ProbeState = probeStart(Date.now());
  #probeTimer: ReturnType<typeof setInterval> | undefined;
  /** When the probe's last tick was due (epoch ms). */
  #probeDueAt = 0;
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
   * @param probe The absolute path of a file outside the watched tree (in the data folder)
   * to probe the watcher with; made if missing. None: a stalled watcher is found by the
   * next safety rescan only.
   */
  constructor(
    root: string,
    excluded: (name: string) => boolean,
    backlog: number | undefined,
    onEvent: (event: TreeEvent) => void,
    probe?: string,
  ) {
    this.#root = root;
    this.#excluded = excluded;
    this.#backlog = backlog;
    this.#onEvent = onEvent;
    this.#probe = probe;
  }

  /**
   * Starts watching the root and every top-level folder; resolves once they all report
   * events. The folders already there are not reported: what changed in them before their
   * watch existed is the caller's to find by a scan after this (a report of each would have
   * it captured whole, a large tree at once).
   */
  async start(): Promise<void> {
    this.#thread = this.#startThread();
    const made: Promise<unknown>[] = [
      this.#watch("", false),
      this.#watchProbe(),
      this.#watchLinks(),
    ];
    for await (const entry of Deno.readDir(this.#root)) {
      if (entry.isDirectory) made.push(this.#syncFolder(entry.name, false));
    }
    await Promise.all(made);
    if (this.#probe && !this.#closed) {
      this.#probeState = probeStart(Date.now());
      this.#probeDueAt = Date.now() + PROBE_TICK_MS;
      this.#probeTimer = setInterval(() => this.#probeTick(), PROBE_TICK_MS);
    }
  }

  /** Stops every watch and the thread that holds them. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#probeTimer);
    for (const timer of this.#retries) clearTimeout(timer);
    this.#retries.clear();
    this.#watched.clear();
    await this.#thread?.close();
  }

  #startThread(): WatchThread {
    const thread: WatchThread = new WatchThread(this.#backlog, {
      events: (batch) => {
        if (batch.length > 0) this.#followProbe({ type: "heard", nowMs: Date.now() });
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
    if (this.#closed || name === PROBE_ID) return; // the probe's: heard, nothing more
    if (name === "" && event.flag !== "rescan") {
      this.#onRootEvent(event);
      // The folder's own watch reports it.
      if (onlyInsideTopFolders(this.#root, event.paths)) return;
    }
    this.#onEvent(event);
  }

  /**
   * Watches `name` ("" for the root; {@linkcode PROBE_ID}, {@linkcode LINKS_ID} for the probe
   * and the links); `true` once it reports events.
   */
  async #watch(name: string, recursive: boolean): Promise<boolean> {
    const thread = this.#thread;
    if (this.#closed || !thread || this.#watched.has(name)) return false;
    this.#watched.add(name);
    const path = name === PROBE_ID
      ? this.#probe!
      : name === LINKS_ID
      ? "/"
      : name === ""
      ? this.#root
      : `${this.#root}/${name}`;
    const result = await thread.watch(name, path, {
      recursive,
      ...(name === LINKS_ID ? { onlyLinksUnder: this.#root } : {}),
    });
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
    if (name === PROBE_ID) {
      // The probe file removed, say: watched again at the next touch. Nothing was lost.
      log("debug", "the watch probe's watch ended: made again at the next touch", { error });
      return;
    }
    this.#retryLater(name, "folder watch ended: made again, and the workspace scanned", error);
  }

  /**
   * The watcher stayed stalled through the scan that followed (see `watch_probe.ts`): its
   * thread is left waiting, and every watch made again on a new one, as when a thread fails.
   */
  #restartThread(): void {
    const stuck = this.#thread;
    if (this.#closed || !stuck) return;
    stuck.abandon();
    this.#threadFailed("it stayed stalled (on a named pipe no scan reaches, most likely)");
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
    const about = name === null ? {} : { name: name === "" ? "." : name };
    log("warn", what, { ...about, error, retryMs: delayMs });
    this.#onEvent(LOST);
    const timer = setTimeout(() => {
      this.#retries.delete(timer);
      if (this.#closed) return;
      if (name === null) {
        this.#thread = this.#startThread();
        this.#watchProbe();
        this.#watchLinks();
      }
      if (name === null || name === "") this.#watchRootAgain();
      else if (name === LINKS_ID) this.#watchLinks();
      else this.#syncFolder(name, false); // gone or excluded since: not watched
      // What changed while it was not watched: the scan after the retry finds it.
      this.#onEvent(LOST);
    }, delayMs);
    this.#retries.add(timer);
  }

  /** Watches `/` for the links to outside the workspace, on Linux (see {@linkcode TreeWatcher}). */
  async #watchLinks(): Promise<void> {
    // Elsewhere (macOS's FSEvents) a watch of `/` would be handed the whole disk's events.
    if (Deno.build.os === "linux") await this.#watch(LINKS_ID, false);
  }

  /** Watches the probe file (made first if missing), if the watcher is probed. */
  async #watchProbe(): Promise<void> {
    if (!this.#probe || this.#closed) return;
    try {
      Deno.writeFileSync(this.#probe, new Uint8Array(), { createNew: true });
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) {
        log("warn", "cannot make the watch probe: a stalled watcher is found by rescans only", {
          path: this.#probe,
          error,
        });
        return;
      }
    }
    await this.#watch(PROBE_ID, false);
  }

  #probeTick(): void {
    const now = Date.now();
    const lateMs = now - this.#probeDueAt;
    this.#probeDueAt = now + PROBE_TICK_MS;
    this.#followProbe({ type: "tick", nowMs: now, lateMs });
  }

  /** Does what {@linkcode probeStep} decides. */
  #followProbe(input: ProbeInput): void {
    if (!this.#probe || this.#closed) return;
    const { state, action } = probeStep(this.#probeState, input);
    this.#probeState = state;
    switch (action) {
      case "touch":
        this.#touchProbe();
        return;
      case "stalled":
        log(
          "warn",
          "file watching stalled (on a named pipe made since the last scan, most likely): scanning the workspace",
        );
        // As lost events: the scan holds the pipe, and records what the watcher missed.
        return this.#onEvent(LOST);
      case "restart":
        return this.#restartThread();
      case "giveUp":
        log(
          "error",
          "file watching stays stalled, and was made again as often as it may be: changes are found by the safety rescans only; restart Chronicle to watch again",
        );
        return;
      case "recovered":
        log("info", "file watching reports again");
        return;
    }
  }

  /**
   * Changes the probe file's times: an event of its watch, if the watcher reports. A probe
   * file removed, or whose watch ended, is made and watched again first.
   */
  async #touchProbe(): Promise<void> {
    const probe = this.#probe!;
    if (!this.#watched.has(PROBE_ID) || lstatOrNullSync(probe)?.isFile !== true) {
      this.#thread?.unwatch(PROBE_ID);
      this.#watched.delete(PROBE_ID);
      await this.#watchProbe();
    }
    try {
      const now = new Date();
      Deno.utimeSync(probe, now, now);
    } catch (error) {
      log("warn", "cannot touch the watch probe", { path: probe, error });
    }
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
