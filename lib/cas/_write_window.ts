/**
 * Bounded concurrency for chunk writes, so reading, hashing and chunking the next piece
 * overlaps the disk work (fsync) of the previous ones. Internal to `lib/cas`.
 *
 * @module
 */

/** Keeps at most `limit` writes in flight; reports the first failure once all have settled. */
export class WriteWindow {
  readonly #limit: number;
  #inFlight: Promise<void>[] = [];

  /** @param limit Writes allowed in flight at once (at least 1). */
  constructor(limit: number) {
    this.#limit = Math.max(1, limit);
  }

  /**
   * Adds a started write, waiting for the oldest one when the window is full.
   *
   * @throws The first failed write's error, after every write in flight has settled.
   */
  async add(write: Promise<void>): Promise<void> {
    write.catch(() => {/* observed in #settle or finish */});
    this.#inFlight.push(write);
    if (this.#inFlight.length < this.#limit) return;
    const oldest = this.#inFlight.shift()!;
    try {
      await oldest;
    } catch (error) {
      await this.#settle();
      throw error;
    }
  }

  /**
   * Waits for every write in flight.
   *
   * @throws The first failed write's error.
   */
  async finish(): Promise<void> {
    const results = await this.#settle();
    const failed = results.find((r) => r.status === "rejected");
    if (failed) throw (failed as PromiseRejectedResult).reason;
  }

  async #settle(): Promise<PromiseSettledResult<void>[]> {
    const all = this.#inFlight;
    this.#inFlight = [];
    return await Promise.allSettled(all);
  }
}
