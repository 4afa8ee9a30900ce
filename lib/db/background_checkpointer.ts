import type { DatabaseSync } from "node:sqlite";
import { log } from "../log/mod.ts";

/** SQLite's default `wal_autocheckpoint`, given back when the background one stops. */
const DEFAULT_AUTOCHECKPOINT_PAGES = 1000;
/** How long {@linkcode BackgroundCheckpointer.stop} waits for the worker's last checkpoint. */
const STOP_WAIT_MS = 5000;

/** Options for {@linkcode BackgroundCheckpointer.start}. */
export interface BackgroundCheckpointerOptions {
  /** Milliseconds between two checkpoints. @default {1000} */
  intervalMs?: number;
}

/**
 * Checkpoints a WAL database from a worker thread, on its own connection, instead of in
 * the commits of the connection that writes.
 *
 * SQLite's automatic checkpoint runs inside the commit that crosses `wal_autocheckpoint`
 * pages: that commit then copies the WAL into the database and waits for two fsyncs, on
 * the thread that made it. A replica applying an initial sync commits a batch every few
 * milliseconds, and spent a tenth of its profile in `exec` doing that, blocking the apply
 * pipeline meanwhile. Here the writer's automatic checkpoint is off, and a worker runs a
 * PASSIVE checkpoint every {@linkcode BackgroundCheckpointerOptions.intervalMs}: it copies
 * what readers allow, never waits for a lock and never blocks the writer.
 *
 * Durability is unchanged: commits are made durable by the WAL, as before
 * (`synchronous=NORMAL`: across a crash of the process at once, across a power cut once a
 * checkpoint or a flush of the file system has written the WAL), and a checkpoint only
 * moves committed pages from the WAL into the database file. Should the worker fail, the
 * writer's automatic checkpoint is turned on again, so the WAL never grows without bound.
 *
 * @example
 * ```ts ignore
 * const checkpointer = BackgroundCheckpointer.start(store.db);
 * // ... many commits ...
 * await checkpointer.stop();
 * ```
 */
export class BackgroundCheckpointer {
  readonly #db: DatabaseSync;
  readonly #worker: Worker;
  #running = true;
  #stopped: Promise<void> | null = null;
  /** Resolves the wait of {@linkcode BackgroundCheckpointer.stop} once the worker is done. */
  #stoppedByWorker: () => void = () => {};

  private constructor(db: DatabaseSync, worker: Worker) {
    this.#db = db;
    this.#worker = worker;
  }

  /**
   * Starts checkpointing `db`'s file from a worker, and turns `db`'s own automatic
   * checkpoint off.
   *
   * @param db An open connection, in WAL mode, to a database file (not `:memory:`).
   * @param options See {@linkcode BackgroundCheckpointerOptions}.
   * @returns The running checkpointer; {@linkcode BackgroundCheckpointer.stop} it before
   * `db` is closed.
   */
  static start(
    db: DatabaseSync,
    options: BackgroundCheckpointerOptions = {},
  ): BackgroundCheckpointer {
    const path = db.location();
    if (path === null) {
      throw new TypeError("Only a database file can be checkpointed in the background");
    }
    // `deno compile` leaves a Worker's module out unless named: every compile task in
    // deno.json has `--include lib/db/_checkpoint_worker.ts` (a deploy test checks it).
    const worker = new Worker(new URL("./_checkpoint_worker.ts", import.meta.url), {
      type: "module",
    });
    const checkpointer = new BackgroundCheckpointer(db, worker);
    worker.onmessage = (event: MessageEvent) => checkpointer.#onMessage(event.data);
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      checkpointer.#failed(event.message);
    };
    db.exec("PRAGMA wal_autocheckpoint = 0");
    worker.postMessage({ type: "start", path, intervalMs: options.intervalMs ?? 1000 });
    return checkpointer;
  }

  /** Whether the worker is checkpointing (not stopped, not failed). */
  get running(): boolean {
    return this.#running;
  }

  /**
   * Runs a last checkpoint, stops the worker and turns `db`'s automatic checkpoint on
   * again. Waits at most a few seconds for the worker.
   */
  stop(): Promise<void> {
    this.#stopped ??= this.#stop();
    return this.#stopped;
  }

  async #stop(): Promise<void> {
    if (this.#running) {
      const { promise, resolve } = Promise.withResolvers<void>();
      this.#stoppedByWorker = resolve;
      this.#worker.postMessage({ type: "stop" });
      const timer = setTimeout(resolve, STOP_WAIT_MS);
      await promise;
      clearTimeout(timer);
    }
    this.#end();
  }

  #onMessage(message: { type: string; message?: string }): void {
    if (message.type === "failed") this.#failed(message.message ?? "unknown error");
    else if (message.type === "stopped") this.#stoppedByWorker();
  }

  #failed(reason: string): void {
    if (!this.#running) return;
    log("warn", "background checkpoint failed; the database checkpoints in its commits again", {
      reason,
    });
    this.#end();
    this.#stoppedByWorker();
  }

  /** The worker gone, the writer checkpoints in its commits again. */
  #end(): void {
    this.#running = false;
    this.#worker.terminate();
    if (this.#db.isOpen) {
      this.#db.exec(`PRAGMA wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_PAGES}`);
    }
  }
}
