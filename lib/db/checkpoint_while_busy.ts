import type { DatabaseSync } from "node:sqlite";
import { errorMessage, log } from "../log/mod.ts";
import { BackgroundCheckpointer } from "./background_checkpointer.ts";

/** How long the background checkpointer outlives the bulk work it was started for, by default. */
export const CHECKPOINT_IDLE_MS = 10_000;

/** Options for {@linkcode CheckpointWhileBusy}. */
export interface CheckpointWhileBusyOptions {
  /**
   * Milliseconds after {@linkcode CheckpointWhileBusy.idle} before the worker stops: a
   * bulk that starts again sooner (the next connection of a cut catch-up) keeps it.
   * @default {CHECKPOINT_IDLE_MS}
   */
  idleMs?: number;
}

/**
 * A {@linkcode BackgroundCheckpointer} that runs only while a bulk of commits does (a
 * replica's initial sync, catch-up or resync): the writer's own automatic checkpoint
 * serves the rest of the time. The worker is a second V8 isolate: about 6 MiB of a large
 * replica's resident memory (13 MiB of a small process), measured side by side on ten copies
 * of a 100,000-file replica restarting at once (typical copies 124–134 MiB with it, 118–128
 * without), less than what separates two such runs (another without it peaked at 148.6).
 * Outside a bulk, commits are few and small, and checkpointing inside them costs little.
 *
 * Transitions run one after another: a start waits for a stop under way, and nothing
 * starts once {@linkcode CheckpointWhileBusy.close} was called.
 *
 * @example
 * ```ts ignore
 * const checkpoints = new CheckpointWhileBusy(store.db);
 * checkpoints.busy(); // a large catch-up starts
 * // ... many commits ...
 * checkpoints.idle(); // in sync: the worker stops after a quiet while
 * await checkpoints.close();
 * ```
 */
export class CheckpointWhileBusy {
  readonly #db: DatabaseSync;
  readonly #options: CheckpointWhileBusyOptions;
  #checkpointer: BackgroundCheckpointer | null = null;
  /** Whether a bulk is under way (or ended less than `idleMs` ago). */
  #wanted = false;
  #closed = false;
  #idleTimer: ReturnType<typeof setTimeout> | undefined;
  /** When the armed idle timer fires (epoch ms). */
  #idleDueAt = Infinity;
  /** The transitions asked for, one after another. */
  #transitions: Promise<void> = Promise.resolve();

  /**
   * Makes it, with no worker yet: the first {@linkcode CheckpointWhileBusy.busy} starts one.
   *
   * @param db The writer's connection, in WAL mode; a database not in a file (`:memory:`)
   * is never checkpointed in the background.
   * @param options See {@linkcode CheckpointWhileBusyOptions}.
   */
  constructor(db: DatabaseSync, options: CheckpointWhileBusyOptions = {}) {
    this.#db = db;
    this.#options = options;
  }

  /** Whether the worker is checkpointing now. */
  get running(): boolean {
    return this.#checkpointer?.running ?? false;
  }

  /** A bulk of commits starts: the worker runs (started, or kept from stopping). */
  busy(): void {
    if (this.#closed || this.#db.location() === null) return;
    this.#cancelIdle();
    this.#wanted = true;
    this.#settle();
  }

  /**
   * The bulk ended: the worker stops once `afterMs` passed with no new bulk (the earliest
   * stop asked for wins).
   *
   * @param afterMs How long the worker outlives the bulk: `idleMs` by default; 0 when no
   * bulk is expected soon (a catch-up that reached the master: its worker, a second V8
   * isolate, would otherwise stay through the scan that follows, and add to its peak).
   */
  idle(afterMs: number = this.#options.idleMs ?? CHECKPOINT_IDLE_MS): void {
    const dueAt = Date.now() + afterMs;
    if (!this.#wanted || this.#idleDueAt <= dueAt) return;
    this.#cancelIdle();
    this.#idleDueAt = dueAt;
    this.#idleTimer = setTimeout(() => {
      this.#cancelIdle();
      this.#wanted = false;
      this.#settle();
    }, afterMs);
    Deno.unrefTimer(this.#idleTimer);
  }

  /** Resolves once the transitions asked for so far are done. */
  settled(): Promise<void> {
    return this.#transitions;
  }

  /** Stops the worker (its last checkpoint run) and starts none again. */
  close(): Promise<void> {
    this.#closed = true;
    this.#cancelIdle();
    this.#settle();
    return this.#transitions;
  }

  /** Disarms the idle timer, if armed. */
  #cancelIdle(): void {
    clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    this.#idleDueAt = Infinity;
  }

  /** Brings the worker to what is wanted now, after the transitions before. */
  #settle(): void {
    this.#transitions = this.#transitions.then(async () => {
      const wanted = this.#wanted && !this.#closed;
      // A worker that failed has handed checkpoints back to the writer: a next bulk tries
      // a new one.
      if (wanted && !this.running) {
        this.#checkpointer = BackgroundCheckpointer.start(this.#db);
      } else if (!wanted && this.#checkpointer !== null) {
        const stopping = this.#checkpointer;
        this.#checkpointer = null;
        await stopping.stop();
      }
    }).catch((error) => {
      // The writer's own automatic checkpoint still serves (it is off only while a worker
      // runs).
      log("warn", "background checkpoint could not start or stop", { reason: errorMessage(error) });
    });
  }
}
