/** Options for {@linkcode Debouncer}. */
export interface DebouncerOptions<K = unknown> {
  /** Quiet time after the last event before a batch is flushed. */
  quietMs: number;
  /** Longest an event waits under a continuous stream of events. @default {quietMs * 20} */
  maxWaitMs?: number;
  /**
   * Whether a ready key must wait for the pending batch after all, to keep the order of
   * changes (say, the creation of the folder it is in is still pending).
   * @default {never}
   */
  waitsFor?: (pending: ReadonlySet<K>, key: K) => boolean;
}

/**
 * Collects keys and hands them over in batches once events pause for `quietMs`, or after
 * `maxWaitMs` at the latest, so a burst of saves becomes one batch. Keys known to be
 * complete ({@linkcode Debouncer.addReady}) skip the wait.
 */
export class Debouncer<K> {
  readonly #pending = new Set<K>();
  readonly #ready = new Set<K>();
  #readyScheduled = false;
  readonly #flush: (batch: Set<K>) => void;
  readonly #quietMs: number;
  readonly #maxWaitMs: number;
  readonly #waitsFor: (pending: ReadonlySet<K>, key: K) => boolean;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #firstAt = 0;

  /** Makes a debouncer that hands each batch of keys to `flush`. */
  constructor(options: DebouncerOptions<K>, flush: (batch: Set<K>) => void) {
    this.#quietMs = options.quietMs;
    this.#maxWaitMs = options.maxWaitMs ?? options.quietMs * 20;
    this.#waitsFor = options.waitsFor ?? (() => false);
    this.#flush = flush;
  }

  /** Adds keys to the pending batch and restarts the quiet timer. */
  add(keys: Iterable<K>): void {
    if (this.#pending.size === 0) this.#firstAt = Date.now();
    for (const key of keys) this.#pending.add(key);
    if (this.#pending.size === 0) return;
    clearTimeout(this.#timer);
    const waited = Date.now() - this.#firstAt;
    const delay = Math.max(0, Math.min(this.#quietMs, this.#maxWaitMs - waited));
    this.#timer = setTimeout(() => this.flushNow(), delay);
  }

  /**
   * Adds keys whose change is complete (a writer closed the file): they are handed over
   * as soon as the current task ends, with whatever else became ready meanwhile, without
   * waiting for the quiet time.
   */
  addReady(keys: Iterable<K>): void {
    for (const key of keys) {
      if (this.#waitsFor(this.#pending, key)) {
        this.#pending.add(key); // the pending batch is on its timer already
        continue;
      }
      this.#pending.delete(key);
      this.#ready.add(key);
    }
    if (this.#ready.size === 0 || this.#readyScheduled) return;
    this.#readyScheduled = true;
    // A microtask, not a timer: Deno's timers fire no sooner than about 2 ms.
    queueMicrotask(() => {
      this.#readyScheduled = false;
      this.#handOver(this.#ready);
    });
  }

  /** Hands over whatever is pending now. */
  flushNow(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const key of this.#ready) this.#pending.add(key);
    this.#ready.clear();
    this.#handOver(this.#pending);
  }

  #handOver(keys: Set<K>): void {
    if (keys.size === 0) return;
    const batch = new Set(keys);
    keys.clear();
    this.#flush(batch);
  }

  /** Drops pending keys and stops the timer. */
  cancel(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#pending.clear();
    this.#ready.clear();
  }
}
