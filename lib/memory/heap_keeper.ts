/**
 * Keeps the V8 heap close to what it holds alive. V8 lets garbage pile up until the old
 * generation reaches a limit that starts tens of MiB above what is alive and grows with the
 * heap. A replica's initial sync makes short-lived rows, stats, frames and contents by the
 * hundred thousand, and most of them outlive the 1 MiB young generation the binaries run
 * with (`BINARY_V8_FLAGS`), so they die in the old one: at 100,000 files its peak held
 * 40 MiB of garbage in V8's pages and more in the array buffers and malloc memory that
 * garbage kept. Collecting whenever a few MiB of garbage have piled up bounds all three.
 *
 * V8 collects on its own as well: this only adds collections, sooner, and only in a process
 * large enough for them to matter (`rssFloorBytes`; a process that passed it after a burst
 * most often stays above it, and the keeper keeps working). It needs V8's `gc()`, which
 * `--expose-gc` gives (in `BINARY_V8_FLAGS`); without it nothing is done.
 *
 * @module
 */

/**
 * Garbage (V8 heap and array buffers) allowed to pile up before a collection, by default;
 * or a quarter of what the last collection left alive, when that is more (see
 * {@linkcode collectionDue}).
 */
export const HEAP_GARBAGE_BUDGET = 8 * 1024 * 1024;

/**
 * Below this resident size nothing is collected, by default: an idle or small process
 * (about 95 MiB, most of it the runtime's code) pays no collection at all.
 */
export const HEAP_KEEPER_RSS_FLOOR = 112 * 1024 * 1024;

/** How often the heap is looked at, by default (a look costs microseconds). */
export const HEAP_CHECK_MS = 100;

/** What the keeper reads at each look, bytes. */
export interface HeapReading {
  /** V8 heap in use plus the array buffers its objects hold outside it. */
  held: number;
  /**
   * `held` right after the last collection (0 before the first), or less since: lowered
   * to `held` whenever that is lower (V8 collected on its own).
   */
  heldAfterLast: number;
  /** The process's resident set size. */
  rss: number;
}

/** The limits a collection is weighed against, bytes. */
export interface HeapLimits {
  /** Growth of `held` allowed since the last collection, at least. */
  budget: number;
  /** Resident size below which nothing is collected. */
  rssFloor: number;
}

/**
 * Whether to collect now: the process is at least `rssFloor` large, and what it holds
 * grew since the last collection by `budget` or a quarter of what that collection left, the
 * larger (pure). The quarter keeps the keeper's share of the time bounded in a large heap:
 * a collection's cost grows with what is alive, and the collections then come as much
 * less often.
 *
 * @param reading What the keeper read.
 * @param limits The budget and the floor.
 * @returns `true` when a collection is due.
 * @example
 * ```ts
 * import { equal } from "node:assert/strict";
 * const limits = { budget: 8 << 20, rssFloor: 112 << 20 };
 * equal(collectionDue({ held: 30 << 20, heldAfterLast: 20 << 20, rss: 150 << 20 }, limits), true);
 * equal(collectionDue({ held: 30 << 20, heldAfterLast: 20 << 20, rss: 100 << 20 }, limits), false);
 * // 100 MiB alive: 25 MiB of growth allowed.
 * equal(collectionDue({ held: 120 << 20, heldAfterLast: 100 << 20, rss: 300 << 20 }, limits), false);
 * ```
 */
export function collectionDue(reading: HeapReading, limits: HeapLimits): boolean {
  const allowed = Math.max(limits.budget, reading.heldAfterLast / 4);
  return reading.rss >= limits.rssFloor && reading.held - reading.heldAfterLast >= allowed;
}

/** Options of {@linkcode keepHeapSmall}. */
export interface HeapKeeperOptions {
  /** Garbage allowed to pile up, bytes. @default {HEAP_GARBAGE_BUDGET} */
  budgetBytes?: number;
  /** Resident size below which nothing is collected, bytes. @default {HEAP_KEEPER_RSS_FLOOR} */
  rssFloorBytes?: number;
  /** How often to look, ms. @default {HEAP_CHECK_MS} */
  intervalMs?: number;
  /** Told after each collection how long it took, ms. */
  onCollected?: (ms: number) => void;
}

/** A running {@linkcode keepHeapSmall} (its collections are told to `onCollected`). */
export interface HeapKeeper {
  /** Stops looking. */
  stop(): void;
}

/**
 * Looks at the process's memory every `intervalMs` and collects the V8 heap's garbage
 * when {@linkcode collectionDue}. The timer does not keep the process alive.
 *
 * @param options The limits, the interval, and who is told of each collection.
 * @returns The keeper, or `null` when `gc()` is not exposed (`--expose-gc`).
 * @throws {RangeError} When a limit is negative or not a number, or the interval is not
 * a positive number.
 * @example
 * ```ts ignore
 * const keeper = keepHeapSmall({ onCollected: () => metrics.heapCollections.inc() });
 * // ...
 * keeper?.stop();
 * ```
 */
export function keepHeapSmall(options: HeapKeeperOptions = {}): HeapKeeper | null {
  const limits: HeapLimits = {
    budget: options.budgetBytes ?? HEAP_GARBAGE_BUDGET,
    rssFloor: options.rssFloorBytes ?? HEAP_KEEPER_RSS_FLOOR,
  };
  const intervalMs = options.intervalMs ?? HEAP_CHECK_MS;
  for (const [name, value] of Object.entries(limits)) {
    if (!(value >= 0)) throw new RangeError(`The heap keeper's ${name} must be 0 or more bytes`);
  }
  if (!(intervalMs > 0)) throw new RangeError("The heap keeper's interval must be positive");
  const gc = (globalThis as { gc?: unknown }).gc;
  if (typeof gc !== "function") return null;
  let heldAfterLast = 0;
  const timer = setInterval(() => {
    const { heapUsed, external, rss } = Deno.memoryUsage();
    const held = heapUsed + external;
    heldAfterLast = Math.min(heldAfterLast, held);
    if (!collectionDue({ held, heldAfterLast, rss }, limits)) return;
    const start = performance.now();
    gc();
    const ms = performance.now() - start;
    const after = Deno.memoryUsage();
    heldAfterLast = after.heapUsed + after.external;
    options.onCollected?.(ms);
  }, intervalMs);
  Deno.unrefTimer(timer);
  return { stop: () => clearInterval(timer) };
}
