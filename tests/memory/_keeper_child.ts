/**
 * Run by heap_keeper_test.ts in a process of its own (with or without `--expose-gc`):
 * keeps the heap with the limits given as arguments, makes garbage until the keeper has
 * collected three times or 200 MiB were made, and prints what the keeper did as JSON.
 *
 * @module
 */
import { keepHeapSmall } from "../../lib/memory/mod.ts";

const [budgetBytes, rssFloorBytes] = Deno.args.map(Number);
const keeper = keepHeapSmall({
  budgetBytes: budgetBytes!,
  rssFloorBytes: rssFloorBytes!,
  intervalMs: 5,
});
let made = 0;
// Each piece lives for a few turns of the event loop, long enough to leave the young
// generation: it dies in the old one, where only a full collection frees it.
const alive: { bytes: Uint8Array; label: string }[] = new Array(256);
let next = 0;
while (keeper !== null && keeper.collections < 3 && made < 200 * 1024 * 1024) {
  for (let i = 0; i < 64; i++) {
    const label = JSON.stringify({ piece: next, made });
    alive[next++ % alive.length] = { bytes: new Uint8Array(16 * 1024), label };
    made += 16 * 1024 + label.length;
  }
  await new Promise((resolve) => setTimeout(resolve, 1));
}
keeper?.stop();
console.log(JSON.stringify(keeper && { collections: keeper.collections, made }));
