/**
 * An unbounded single-consumer queue that an event source pushes into and one loop
 * drains with `for await`. Used where the source (WebSocket events) cannot be paused.
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  #items: T[] = [];
  #head = 0;
  #wake: (() => void) | null = null;
  #ended = false;
  #error: unknown = undefined;
  #failed = false;

  /** Adds an item; ignored after the queue ended. */
  push(item: T): void {
    if (this.#ended) return;
    this.#items.push(item);
    this.#notify();
  }

  /** Ends the iteration after the items already queued. */
  end(): void {
    this.#ended = true;
    this.#notify();
  }

  /** Ends the iteration with `error` after the items already queued. */
  fail(error: unknown): void {
    if (this.#ended) return;
    this.#error = error;
    this.#failed = true;
    this.end();
  }

  /** Items waiting to be taken. */
  get size(): number {
    return this.#items.length - this.#head;
  }

  /**
   * Takes the items at the head of the queue for as long as `accept` says yes, without
   * waiting; the consumer's `for await` goes on after them.
   */
  takeWhile<S extends T>(accept: (item: T) => item is S): S[] {
    const taken: S[] = [];
    while (this.#head < this.#items.length) {
      const item = this.#items[this.#head]!;
      if (!accept(item)) break;
      this.#items[this.#head] = undefined as T;
      this.#head++;
      taken.push(item);
    }
    return taken;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    while (true) {
      if (this.#head < this.#items.length) {
        const item = this.#items[this.#head]!;
        this.#items[this.#head] = undefined as T;
        this.#head++;
        if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
          this.#items = this.#items.slice(this.#head);
          this.#head = 0;
        }
        yield item;
        continue;
      }
      if (this.#ended) {
        if (this.#failed) throw this.#error;
        return;
      }
      await new Promise<void>((resolve) => this.#wake = resolve);
    }
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }
}
