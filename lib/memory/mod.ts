/**
 * The process's memory: a keeper that collects the V8 heap's garbage before it piles up.
 *
 * @module
 */
export {
  collectionDue,
  HEAP_CHECK_MS,
  HEAP_GARBAGE_BUDGET,
  HEAP_KEEPER_RSS_FLOOR,
  type HeapKeeper,
  type HeapKeeperOptions,
  type HeapLimits,
  type HeapReading,
  keepHeapSmall,
} from "./heap_keeper.ts";
