/**
 * Run by heap_keeper_test.ts in a process of its own, with the V8 flags the test gives:
 * `deno run FLAGS _keeper_child.ts BUDGET RSS_FLOOR`. Keeps the heap with those limits,
 * makes garbage until the keeper has collected three times or 200 MiB were made, and
 * prints as JSON what the keeper did: `null` when it could not run, else the bytes made
 * when each collection came, and in all.
 *
 * @module
 */
import { keepHeapSmall } from "../../lib/memory/mod.ts";

const [budgetBytes, rssFloorBytes] = Deno.args.map(Number);
if (Deno.args.length !== 2 || budgetBytes === undefined || rssFloorBytes === undefined) {
  throw new TypeError("Usage: _keeper_child.ts BUDGET_BYTES RSS_FLOOR_BYTES");
}
let made = 0;
const madeAtCollections: number[] = [];
const keeper = keepHeapSmall({
  budgetBytes,
  rssFloorBytes,
  intervalMs: 5,
  onCollected: () => madeAtCollections.push(made),
});
// Each piece lives for four turns of the event loop (4 MiB made), long enough to leave a
// young generation of 1 MiB semi-spaces (the binaries' flags, which the test gives): it
// dies in the old one, where only a full collection frees it.
const alive: { bytes: Uint8Array; label: string }[] = new Array(256);
let next = 0;
while (keeper !== null && madeAtCollections.length < 3 && made < 200 * 1024 * 1024) {
  for (let i = 0; i < 64; i++) {
    const label = JSON.stringify({ piece: next, made });
    alive[next++ % alive.length] = { bytes: new Uint8Array(16 * 1024), label };
    made += 16 * 1024 + label.length;
  }
  await new Promise((resolve) => setTimeout(resolve, 1));
}
keeper?.stop();
console.log(JSON.stringify(keeper && { madeAtCollections, made }));
