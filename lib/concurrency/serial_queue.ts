/**
 * Runs async tasks one at a time, in the order given. Capture and write-through share
 * one queue, so an observation of the disk is never recorded after a newer write.
 */
export class SerialQueue {
  #tail: Promise<unknown> = Promise.resolve();

  /** Queues `task`; resolves or rejects with its outcome. */
  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(task);
    this.#tail = result.catch(() => undefined);
    return result;
  }

  /** Resolves once everything queued so far has finished. */
  idle(): Promise<void> {
    return this.#tail.then(() => undefined);
  }
}
