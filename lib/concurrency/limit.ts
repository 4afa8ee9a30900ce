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

/**
 * Lets at most `limit` tasks run at once, and, when given a budget, tasks whose weights
 * (bytes, say) add up to at most that budget; one task runs whatever its weight. The rest
 * wait their turn, first come first served.
 */
export class TaskLimiter {
  readonly #limit: number;
  readonly #budget: number;
  #active = 0;
  #used = 0;
  readonly #waiting: { weight: number; start: () => void }[] = [];

  /**
   * Makes a limit of `limit` tasks and `budget` total weight at once.
   *
   * @param limit Most tasks at once.
   * @param budget Most total weight at once. @default {Infinity}
   */
  constructor(limit: number, budget = Infinity) {
    if (!(limit >= 1)) throw new RangeError(`A task limit must be at least 1, not ${limit}`);
    if (!(budget >= 0)) throw new RangeError(`A budget cannot be ${budget}`);
    this.#limit = limit;
    this.#budget = budget;
  }

  /** Tasks running or waiting for a slot. */
  get pending(): number {
    return this.#active + this.#waiting.length;
  }

  /** Runs `task` once a slot (and its weight) is free; resolves or rejects with its outcome. */
  async run<T>(task: () => Promise<T>, weight = 0): Promise<T> {
    if (!(weight >= 0)) throw new RangeError(`A task's weight cannot be ${weight}`);
    if (this.#waiting.length === 0 && this.#fits(weight)) this.#take(weight);
    else await new Promise<void>((start) => this.#waiting.push({ weight, start })); // taken for it
    try {
      return await task();
    } finally {
      this.#active--;
      this.#used -= weight;
      this.#startWaiting();
    }
  }

  #fits(weight: number): boolean {
    if (this.#active >= this.#limit) return false;
    return this.#active === 0 || this.#used + weight <= this.#budget;
  }

  #take(weight: number): void {
    this.#active++;
    this.#used += weight;
  }

  /** Starts waiting tasks in order while the first of them fits. */
  #startWaiting(): void {
    while (this.#waiting.length > 0 && this.#fits(this.#waiting[0]!.weight)) {
      const next = this.#waiting.shift()!;
      this.#take(next.weight);
      next.start();
    }
  }
}
