/**
 * Runs `work` over `items` with at most `limit` running at once. Every item is attempted
 * only while none has failed: the first error rejects, once the running ones finish.
 *
 * @param items What to work on, in order of starting.
 * @param limit Most tasks at once.
 * @param work The task for one item.
 */
export async function forEachLimited<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (next < items.length && !failed) {
      try {
        await work(items[next++]!);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** Lets at most `limit` tasks run at once; the rest wait their turn, first come first served. */
export class TaskLimiter {
  readonly #limit: number;
  #active = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Tasks running or waiting for a slot. */
  get pending(): number {
    return this.#active + this.#waiting.length;
  }

  /** Runs `task` once a slot is free; resolves or rejects with its outcome. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#active >= this.#limit) await new Promise<void>((r) => this.#waiting.push(r));
    this.#active++;
    try {
      return await task();
    } finally {
      this.#active--;
      this.#waiting.shift()?.();
    }
  }
}
