/**
 * A watch of the test's own beside a workspace's, counting Deno's reports of lost file
 * events: both are fed the same events at once, and the probe reads its own on the test's
 * main thread, so when its queue overflowed while that thread was busy, a workspace whose
 * backlog is smaller (`WatchOptions.eventBacklog`) lost events too.
 */
export class LossProbe {
  readonly #watcher: Deno.FsWatcher;
  readonly #pumping: Promise<void>;
  #losses = 0;

  /** @param path The folder to watch, recursively (one the workspace watches too). */
  constructor(path: string) {
    const watcher = Deno.watchFs(path, { recursive: true });
    this.#watcher = watcher;
    this.#pumping = (async () => {
      for await (const event of watcher) if (event.flag === "rescan") this.#losses++;
    })();
  }

  /** How many times Deno reported lost events so far. */
  get losses(): number {
    return this.#losses;
  }

  /** Stops watching. */
  async close(): Promise<void> {
    this.#watcher.close();
    await this.#pumping;
  }
}
