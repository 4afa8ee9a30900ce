import type { SerialQueue } from "../concurrency/mod.ts";
import type { DirectionalFilter } from "../filter/mod.ts";
import { lstatOrNullSync } from "../disk/mod.ts";
import { log } from "../log/mod.ts";
import { ancestorsOf, isInside } from "../paths/mod.ts";
import { Debouncer } from "./debouncer.ts";
import { type LossInput, type LossState, nextLossState, NO_LOSS } from "./loss_order.ts";
import { treeEventAction } from "./tree_events.ts";
import { TreeWatcher } from "./tree_watcher.ts";
import type { WatchOptions } from "./workspace_types.ts";

/**
 * With capture on close, the least quiet time for every other event (a deletion, a
 * rename, a mode change, a write whose file is still open): a writer pausing longer than
 * this in the middle of a file is rare, so a file is not recorded half-written.
 */
const OPEN_WRITE_QUIET_MS = 100;

/** The safety rescans' least interval, in multiples of the last scan's duration. */
export const RESCAN_SPACING = 30;

/**
 * When the next rescan is due after one that took `scanMs`, from its end. Pure.
 *
 * @returns Soon (the quiet time) when events were lost while it walked; otherwise the
 * safety rescans' interval, which grows with the scan's duration so that an idle workspace's
 * rescans take about 3% of a core (at ten times, an idle one of 72,000 entries, about 1 s a
 * scan, took 9 to 10% of a core on either side, nonstop).
 * @example
 * ```ts
 * import { equal } from "node:assert/strict";
 * equal(nextRescanMs({ rescanMs: 10_000, debounceMs: 50, scanMs: 1_000, lostMeanwhile: false }), 30_000);
 * ```
 */
export function nextRescanMs(
  options: { rescanMs: number; debounceMs: number; scanMs: number; lostMeanwhile: boolean },
): number {
  if (options.lostMeanwhile) return options.debounceMs;
  return Math.max(options.rescanMs, options.scanMs * RESCAN_SPACING);
}

/** What a {@linkcode WatchDriver} works with. */
export interface WatchDriverContext {
  root: string;
  /** The data folder's path inside the workspace, if it is inside. */
  dataDirInside: string | undefined;
  /** The file, outside the watched tree, that probes whether the watcher still reports. */
  probe?: string;
  filter: DirectionalFilter;
  /** The workspace's queue: every capture runs in it, one at a time with writes. */
  queue: SerialQueue;
  /** Records what is on disk at these scopes now; run in the queue. */
  capture: (scopes: string[]) => Promise<unknown>;
  /**
   * The workspace's scan (which queues its own slices); with `changedBefore`, files
   * modified since are left out (the watcher reports them).
   */
  scan: (changedBefore?: number) => Promise<unknown>;
  /** Whether the workspace is closing or closed. */
  closed: () => boolean;
}

/**
 * The watching side of a workspace: the OS watcher, the debouncer that batches its events,
 * the batches queued as captures, and the safety rescans that catch events the OS dropped.
 * Internal to `Workspace`, whose `watch`, `suspendWatching` and `resumeWatching` it runs.
 *
 * The order of changes survives lost events: no file is recorded before one modified
 * earlier whose event was lost (to the resolution of modification times; see
 * `loss_order.ts`, whose decisions it follows). After a loss the watcher's events are held
 * until a scan that began after it ends; each scan's end releases them, or drops them for
 * the next scan, so nothing waits longer than that scan even when events are lost nonstop.
 */
export class WatchDriver {
  readonly #c: WatchDriverContext;
  #watcher: TreeWatcher | undefined;
  /** Set by {@linkcode WatchDriver.watch}, kept while the watcher is suspended. */
  #options: WatchOptions | undefined;
  #debouncer: Debouncer<string> | undefined;
  #rescanTimer: ReturnType<typeof setTimeout> | undefined;
  /** When the armed rescan timer fires (epoch ms). */
  #rescanDueAt = Infinity;
  /** Whether a rescan is walking or capturing now. */
  #rescanning = false;
  /** The watcher's capture queued and not started yet, which new events join. */
  #waitingCapture: Set<string> | null = null;
  /** Where the order of changes after lost events stands (see `loss_order.ts`). */
  #loss: LossState = NO_LOSS;
  /**
   * The paths the watcher reported while a loss was open, held until it is covered: each
   * with whether its writer closed it last (see `Debouncer.addReady`).
   */
  readonly #held = new Map<string, boolean>();

  /**
   * Makes the driver; nothing is watched before {@linkcode WatchDriver.watch}.
   *
   * @param context What it works with.
   */
  constructor(context: WatchDriverContext) {
    this.#c = context;
  }

  /** Whether the OS reports changes right now. */
  get watching(): boolean {
    return this.#watcher !== undefined;
  }

  /**
   * Starts the watcher and the safety rescans; a second call does nothing.
   *
   * @param options Quiet time, capture on close, rescan interval.
   */
  async watch(options: WatchOptions): Promise<void> {
    if (this.#options || this.#c.closed()) return;
    this.#options = options;
    await this.#start(options);
    // What changed before the watches existed: a scan at once (in slices; the watcher does
    // not report the folders it starts on), unless the caller's own comes right after;
    // then the safety rescans.
    this.#scheduleRescan(options.scanAtStart === false ? options.rescanMs ?? 10_000 : 0);
  }

  /**
   * Stops the watcher and the safety rescans, and hands the events it had to the queue.
   * No rescan while suspended: the resume's own scan covers everything, and one walking a
   * bulk write meanwhile (a replica's catch-up) would re-read each file just written, whose
   * fresh modification time makes its record untrustworthy (see `stateToRemember`).
   */
  async suspend(): Promise<void> {
    const watcher = this.#watcher;
    if (!watcher) return;
    this.#watcher = undefined;
    clearTimeout(this.#rescanTimer);
    this.#rescanDueAt = Infinity;
    await watcher.close();
    this.#debouncer?.flushNow();
    this.#follow({ type: "stopped" }, []);
  }

  /**
   * Starts the watcher again after {@linkcode WatchDriver.suspend}, then scans, then the
   * safety rescans again.
   */
  async resume(): Promise<void> {
    const options = this.#options;
    if (!options || this.#watcher || this.#c.closed()) return;
    await this.#start(options);
    if (this.#c.closed()) return; // closing meanwhile: nothing to record into
    await this.#runScan(true);
  }

  /** Hands the events waiting for their quiet time to the queue at once. */
  flush(): void {
    this.#debouncer?.flushNow();
  }

  /** Stops the rescans and the watcher, and hands the events it had to the queue. */
  async close(): Promise<void> {
    clearTimeout(this.#rescanTimer);
    await this.#watcher?.close();
    this.#debouncer?.flushNow();
  }

  async #start(options: WatchOptions): Promise<void> {
    const captureOnClose = options.captureOnClose ?? true;
    const debounceMs = options.debounceMs ?? 50;
    const debouncer = new Debouncer<string>(
      {
        quietMs: captureOnClose ? Math.max(debounceMs, OPEN_WRITE_QUIET_MS) : debounceMs,
        // A file closed in a folder whose creation is still pending waits for it: files
        // written before the folder's watch existed are then recorded before it.
        waitsFor: (pending, path) => ancestorsOf(path).some((a) => pending.has(a)),
      },
      (batch) => this.#captureBatch(batch),
    );
    this.#debouncer = debouncer;
    const { dataDirInside, filter } = this.#c;
    const excluded = (name: string) =>
      name === dataDirInside?.split("/")[0] || filter.local.ignores(name, true);
    const watcher = new TreeWatcher(this.#c.root, excluded, options.eventBacklog, (event) => {
      const action = treeEventAction(event, captureOnClose);
      if (action === "rescan") return this.#follow({ type: "lost" }, []);
      const paths = this.#relevantPaths(event.paths);
      if (paths.length === 0) return;
      // Counted once: a path held already costs nothing more.
      const added = paths.filter((path) => !this.#held.has(path));
      const bytes = added.reduce((sum, path) => sum + path.length, 0);
      this.#follow({ type: "event", count: added.length, bytes }, paths, action === "closed");
    }, this.#c.probe);
    this.#watcher = watcher;
    await watcher.start();
  }

  /**
   * Does what {@linkcode nextLossState} decides for `input`; `paths` are the event's, `ready`
   * whether its writer closed them (see `Debouncer.addReady`).
   */
  #follow(input: LossInput, paths: string[], ready = false): void {
    const { state, actions } = nextLossState(this.#loss, input);
    this.#loss = state;
    for (const action of actions) {
      switch (action) {
        case "dropPending":
          this.#debouncer?.cancel();
          this.#waitingCapture?.clear();
          break;
        case "dropHeld":
          this.#held.clear();
          break;
        case "rescan":
          this.#rescanSoon(this.#options?.debounceMs ?? 50, input.type !== "event");
          break;
        case "pass":
          if (ready) this.#debouncer?.addReady(paths);
          else this.#debouncer?.add(paths);
          break;
        case "hold":
          for (const path of paths) this.#held.set(path, ready);
          break;
        case "release":
          this.#release();
          break;
      }
    }
  }

  /**
   * Hands the held paths to the debouncer, as if reported now: a file still being written
   * waits for its quiet time like any other. Should events be lost again meanwhile, they
   * are dropped with what else waits, for the scan that follows (it began after all of
   * them), so none is recorded before what that loss hid.
   */
  #release(): void {
    const ready: string[] = [];
    const pending: string[] = [];
    for (const [path, closed] of this.#held) (closed ? ready : pending).push(path);
    this.#held.clear();
    this.#debouncer?.add(pending);
    this.#debouncer?.addReady(ready);
  }

  /**
   * One scan, reported to {@linkcode nextLossState}: it covers the losses reported before
   * it began. While the watcher runs, files modified after that are left to it. Then the
   * next safety rescan is armed, whether it succeeded or not; no other rescan starts while
   * it runs (see `#rescanSoon`).
   *
   * @param rethrow Whether its error is the caller's, or only logged.
   */
  async #runScan(rethrow = false): Promise<void> {
    this.#rescanning = true;
    const started = Date.now();
    const from = this.#loss.losses;
    const changedBefore = this.#watcher ? started : undefined;
    try {
      await this.#c.scan(changedBefore);
    } catch (error) {
      if (rethrow) throw error;
      log("error", "rescan failed", { error });
    } finally {
      this.#follow({ type: "scanEnded", from }, []); // a loss still open: the next one soon
      this.#rescanning = false;
      this.#scheduleRescan(this.#nextRescanMs(started));
    }
  }

  /**
   * The OS lost events (its queue overflowed): the tree is scanned after `quietMs` (the
   * burst that overflowed it is likely still going), in slices like every scan, never
   * captured whole at once (a large tree's every file held together). What changes after
   * the scan's walk passed it is reported by the watcher, which goes on.
   */
  #rescanSoon(quietMs: number, lost: boolean): void {
    // A scan already walking may have passed what was lost: its end finds the loss still
    // open (see loss_order.ts) and runs one more soon.
    if (this.#rescanning) return;
    // Armed this soon already: losses all along a burst do not put the scan off.
    if (this.#rescanDueAt > Date.now() + quietMs) {
      log(
        "info",
        lost
          ? "file events were lost: scanning the workspace"
          : "too many changes to hold until the scan: scanning the workspace",
      );
      this.#scheduleRescan(quietMs);
    }
  }

  /**
   * Arms the one rescan timer (a safety rescan, or one sooner after lost events), in place
   * of any armed before: rescans never run two at a time.
   */
  #scheduleRescan(delayMs: number): void {
    clearTimeout(this.#rescanTimer);
    // Suspended (or never started): the resume arms it.
    if (this.#c.closed() || !this.#watcher) return;
    this.#rescanDueAt = Date.now() + delayMs;
    this.#rescanTimer = setTimeout(() => this.#runScan(), delayMs);
  }

  /** When the rescan after one that began at `started` (and ended now) is due, from now. */
  #nextRescanMs(started: number): number {
    return nextRescanMs({
      rescanMs: this.#options?.rescanMs ?? 10_000,
      debounceMs: this.#options?.debounceMs ?? 50,
      scanMs: Date.now() - started,
      lostMeanwhile: this.#loss.losses > this.#loss.covered,
    });
  }

  /**
   * Queues a capture of the watcher's batch, or joins the one already queued and not yet
   * started: idle, a change is recorded at once; busy, everything that happens meanwhile
   * is recorded together by the next capture.
   */
  #captureBatch(batch: Set<string>): void {
    if (this.#c.closed()) return;
    if (this.#waitingCapture) {
      for (const scope of batch) this.#waitingCapture.add(scope);
      return;
    }
    const scopes = new Set(batch);
    this.#waitingCapture = scopes;
    this.#c.queue.run(async () => {
      this.#waitingCapture = null; // later events make the next capture
      if (scopes.size > 0) await this.#c.capture([...scopes]); // none: dropped after a loss
    }).catch((error) => log("error", "capture failed", { error }));
  }

  #relevantPaths(absolutePaths: string[]): string[] {
    const { root, dataDirInside, filter } = this.#c;
    const out: string[] = [];
    for (const absolute of absolutePaths) {
      if (!absolute.startsWith(root + "/")) continue;
      const relative = absolute.slice(root.length + 1);
      if (dataDirInside && isInside(relative, dataDirInside)) continue;
      if (filter.local.ignores(relative)) continue; // our temp files among others
      // A folder-only pattern (`build/`): left out when the path is a folder now (looked at
      // only when such a pattern matches). A folder removed since is passed on: its capture
      // finds no record of it.
      if (filter.local.ignores(relative, true) && lstatOrNullSync(absolute)?.isDirectory) continue;
      out.push(relative);
    }
    return out;
  }
}
