/**
 * Runs async tasks one at a time, in the order given. Capture and write-through share
 * one queue, so an observation of the disk is never recorded after a newer write.
 */
export class SerialQueue {
  #tail: Promise<unknown> = Promise.resolve();
  #waiting = 0;

  /** How many queued tasks have not started yet. */
  get waiting(): number {
    return this.#waiting;
  }

  /** Queues `task`; resolves or rejects with its outcome. */
  run<T>(task: () => Promise<T>): Promise<T> {
    this.#waiting++;
    const result = this.#tail.then(() => {
      this.#waiting--;
      return task();
    });
    this.#tail = result.catch(() => undefined);
    return result;
  }

  /** Resolves once everything queued so far has finished. */
  idle(): Promise<void> {
    return this.#tail.then(() => undefined);
  }
}
