/** Options for {@linkcode ByteBudget}. */
export interface ByteBudgetOptions {
  /** Bytes one holder may hold. */
  perHolder: number;
  /** Bytes all holders together may hold. */
  total: number;
}

/** Someone holding bytes of a budget: told to let go when it holds too much. */
export interface BudgetHolder {
  /** Ends the holder (closes its connection), releasing its bytes. */
  evict(reason: string): void;
}

/**
 * A budget of bytes held by connections for frames they have not finished receiving.
 * A connection over its own share is evicted; when all of them together are over the
 * total, the one holding most is evicted (a peer that sent a large length and then went
 * silent), so one peer cannot grow the process's memory, nor many peers together.
 */
export class ByteBudget {
  readonly #perHolder: number;
  readonly #limit: number;
  readonly #held = new Map<BudgetHolder, number>();
  #total = 0;

  /**
   * An empty budget.
   *
   * @param options See {@linkcode ByteBudgetOptions}.
   */
  constructor(options: ByteBudgetOptions) {
    this.#perHolder = options.perHolder;
    this.#limit = options.total;
  }

  /** Bytes held now by every holder together. */
  get total(): number {
    return this.#total;
  }

  /**
   * Records that `holder` now holds `bytes` (0 releases it), evicting whoever must go.
   *
   * @returns False when `holder` itself was evicted.
   */
  set(holder: BudgetHolder, bytes: number): boolean {
    const before = this.#held.get(holder) ?? 0;
    if (bytes === 0) this.#held.delete(holder);
    else this.#held.set(holder, bytes);
    this.#total += bytes - before;
    if (bytes > this.#perHolder) {
      this.#evict(
        holder,
        `a partial frame of '${bytes}' bytes exceeds the per-connection budget of '${this.#perHolder}' bytes`,
      );
      return false;
    }
    let selfEvicted = false;
    while (this.#total > this.#limit) {
      const largest = this.#largest();
      if (!largest) break;
      if (largest === holder) selfEvicted = true;
      this.#evict(
        largest,
        `partial frames of all connections exceed the budget of '${this.#limit}' bytes, and this one holds the most`,
      );
    }
    return !selfEvicted;
  }

  #largest(): BudgetHolder | undefined {
    let found: BudgetHolder | undefined;
    let most = -1;
    for (const [holder, bytes] of this.#held) {
      if (bytes > most) {
        most = bytes;
        found = holder;
      }
    }
    return found;
  }

  #evict(holder: BudgetHolder, reason: string): void {
    this.#total -= this.#held.get(holder) ?? 0;
    this.#held.delete(holder);
    holder.evict(reason);
  }
}
