/**
 * The OS watches of a workspace, run on a worker thread (`_watch_worker.ts`). Internal to
 * `lib/workspace` (see `TreeWatcher`).
 *
 * @module
 */

/** How to watch a path. */
export interface WatchHow {
  /** Whether what lies under the path is watched too. */
  recursive: boolean;
  /**
   * Pass on only the events of symbolic links under this absolute folder, each of whose
   * paths lies under it (a watch of `/` is handed every event of the process's watches).
   */
  onlyLinksUnder?: string;
}

/** What a watch request came to. */
export type WatchResult = { ok: true } | { ok: false; notFound: boolean; message: string };

/** What a {@linkcode WatchThread} tells its owner, on the main thread. */
export interface WatchThreadHandlers {
  /** Events, in the order the OS reported them; `id` is the watch's ("/" for a loss here). */
  events(batch: readonly { id: string; event: Deno.FsEvent }[]): void;
  /** A watch ended with an error: what it covered is no longer watched. */
  ended(id: string, message: string): void;
  /** The thread itself failed: no watch is left. */
  failed(message: string): void;
}

/** Events handed over and not acknowledged, at most, by default. */
export const EVENT_BACKLOG = 50_000;

/** How long {@linkcode WatchThread.close} waits for the worker to close its watches. */
const CLOSE_WAIT_MS = 2000;

/**
 * The worker thread that holds a workspace's OS watches and reads their events at once,
 * whatever the main thread is doing: Deno holds about a thousand events per watch and
 * drops the rest while the thread reading them is busy, and a master taking in a large
 * change (a copy of thousands of files on a slow disk) was busy long enough to lose them
 * (then it scans the whole workspace). The worker hands them over in batches, each
 * acknowledged once handled; past its backlog of events not acknowledged it drops them too,
 * and says so.
 */
export class WatchThread {
  readonly #worker: Worker;
  readonly #handlers: WatchThreadHandlers;
  /** Watch requests not answered, by request number. */
  readonly #asked = new Map<number, (result: WatchResult) => void>();
  #requests = 0;
  #closed: Promise<void> | null = null;
  #onClosed: () => void = () => {};
  #failed = false;

  /**
   * Starts the worker.
   *
   * @param backlog Events handed over and not acknowledged, at most ({@linkcode
   * EVENT_BACKLOG} when undefined).
   * @param handlers Where its events and failures go.
   */
  constructor(backlog: number | undefined, handlers: WatchThreadHandlers) {
    this.#handlers = handlers;
    // `deno compile` leaves a Worker's module out unless named: every compile task in
    // deno.json has `--include lib/workspace/_watch_worker.ts` (a deploy test checks it).
    this.#worker = new Worker(new URL("./_watch_worker.ts", import.meta.url), { type: "module" });
    this.#worker.onmessage = (event: MessageEvent) => this.#onMessage(event.data);
    this.#worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      this.#fail(event.message);
    };
    this.#worker.postMessage({ type: "backlog", count: Math.max(1, backlog ?? EVENT_BACKLOG) });
  }

  /**
   * Watches `path` under `id`, in place of an earlier watch of that id.
   *
   * @returns Once the watch reports events, or why it could not be made.
   */
  watch(id: string, path: string, how: WatchHow): Promise<WatchResult> {
    if (this.#failed || this.#closed) {
      return Promise.resolve({ ok: false, notFound: false, message: "the watch thread ended" });
    }
    const request = ++this.#requests;
    const { promise, resolve } = Promise.withResolvers<WatchResult>();
    this.#asked.set(request, resolve);
    this.#worker.postMessage({ type: "watch", id, request, path, ...how });
    return promise;
  }

  /** Stops the watch of `id`, if any. */
  unwatch(id: string): void {
    if (!this.#failed && !this.#closed) this.#worker.postMessage({ type: "unwatch", id });
  }

  /**
   * Ends the worker at once, without closing its watches: Deno's watcher stuck on an event
   * (see `watch_probe.ts`) holds the lock that closing a watch waits for. The thread that
   * waits, and its kernel watches, are left behind.
   */
  abandon(): void {
    this.#closed ??= Promise.resolve();
    this.#worker.terminate();
    this.#answerAll("the watch thread was abandoned");
  }

  /** Closes every watch and ends the worker. */
  close(): Promise<void> {
    this.#closed ??= this.#close();
    return this.#closed;
  }

  async #close(): Promise<void> {
    if (!this.#failed) {
      const { promise, resolve } = Promise.withResolvers<void>();
      this.#onClosed = resolve;
      this.#worker.postMessage({ type: "close" });
      const timer = setTimeout(resolve, CLOSE_WAIT_MS);
      await promise;
      clearTimeout(timer);
    }
    this.#worker.terminate();
    this.#answerAll("the watch thread ended");
  }

  #onMessage(message: {
    type: string;
    id?: string;
    request?: number;
    error?: { notFound: boolean; message: string };
    events?: { id: string; kind: Deno.FsEvent["kind"]; paths: string[]; flag?: string }[];
    message?: string;
  }): void {
    switch (message.type) {
      case "events": {
        const events = message.events ?? [];
        try {
          this.#handlers.events(events.map(({ id, ...event }) => ({
            id,
            event: event as Deno.FsEvent,
          })));
        } finally {
          if (!this.#closed) this.#worker.postMessage({ type: "ack", count: events.length });
        }
        return;
      }
      case "watched": {
        const resolve = this.#asked.get(message.request!);
        this.#asked.delete(message.request!);
        resolve?.(message.error ? { ok: false, ...message.error } : { ok: true });
        return;
      }
      case "ended":
        return this.#handlers.ended(message.id!, message.message ?? "unknown error");
      case "closed":
        return this.#onClosed();
    }
  }

  #fail(message: string): void {
    if (this.#failed) return;
    this.#failed = true;
    this.#worker.terminate();
    this.#answerAll(`the watch thread failed: ${message}`);
    this.#onClosed();
    this.#handlers.failed(message);
  }

  #answerAll(message: string): void {
    for (const resolve of this.#asked.values()) resolve({ ok: false, notFound: false, message });
    this.#asked.clear();
  }
}
