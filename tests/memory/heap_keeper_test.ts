import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { BINARY_V8_FLAGS } from "../../lib/cli/mod.ts";
import {
  collectionDue,
  HEAP_GARBAGE_BUDGET,
  type HeapReading,
  keepHeapSmall,
} from "../../lib/memory/mod.ts";

const MiB = 1024 * 1024;

Deno.test("collectionDue: once the process is large and the garbage grew by the budget", () => {
  const limits = { budget: 8 * MiB, rssFloor: 112 * MiB };
  const cases: [string, HeapReading, boolean][] = [
    ["grew by the budget", { held: 28 * MiB, heldAfterLast: 20 * MiB, rss: 150 * MiB }, true],
    ["grew by more", { held: 60 * MiB, heldAfterLast: 20 * MiB, rss: 150 * MiB }, true],
    ["grew by less", { held: 27 * MiB, heldAfterLast: 20 * MiB, rss: 150 * MiB }, false],
    ["shrank", { held: 10 * MiB, heldAfterLast: 20 * MiB, rss: 150 * MiB }, false],
    [
      "before the first, past the budget",
      { held: 30 * MiB, heldAfterLast: 0, rss: 120 * MiB },
      true,
    ],
    ["a small process", { held: 60 * MiB, heldAfterLast: 20 * MiB, rss: 100 * MiB }, false],
    ["right at the floor", { held: 60 * MiB, heldAfterLast: 20 * MiB, rss: 112 * MiB }, true],
    // A large heap: a quarter of what the last collection left alive, not the budget.
    [
      "large, grew by the budget",
      { held: 108 * MiB, heldAfterLast: 100 * MiB, rss: 300 * MiB },
      false,
    ],
    [
      "large, grew by just under a quarter",
      { held: 124 * MiB, heldAfterLast: 100 * MiB, rss: 300 * MiB },
      false,
    ],
    [
      "large, grew by a quarter",
      { held: 125 * MiB, heldAfterLast: 100 * MiB, rss: 300 * MiB },
      true,
    ],
    ["large, grew by half", { held: 150 * MiB, heldAfterLast: 100 * MiB, rss: 300 * MiB }, true],
  ];
  for (const [name, reading, due] of cases) assert.equal(collectionDue(reading, limits), due, name);
});

Deno.test("keepHeapSmall refuses limits that are not sizes", () => {
  assert.throws(() => keepHeapSmall({ budgetBytes: -1 }), RangeError);
  assert.throws(() => keepHeapSmall({ rssFloorBytes: NaN }), RangeError);
  assert.throws(() => keepHeapSmall({ intervalMs: 0 }), RangeError);
});

/** Runs `_keeper_child.ts` with these V8 flags and limits; what it printed. */
async function runChild(
  v8Flags: readonly string[],
  budget: number,
  rssFloor: number,
): Promise<{ madeAtCollections: number[]; made: number } | null> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...v8Flags,
      fileURLToPath(new URL("./_keeper_child.ts", import.meta.url)),
      String(budget),
      String(rssFloor),
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(output.stderr);
  assert.equal(output.code, 0, stderr);
  return JSON.parse(new TextDecoder().decode(output.stdout));
}

Deno.test("keepHeapSmall collects each time the budget's worth of garbage piled up", async () => {
  // The binaries' budget (with `--single-threaded-gc`, V8's own collections keep the garbage
  // under 16 MiB, and a keeper of that budget would never have to collect).
  const budget = HEAP_GARBAGE_BUDGET;
  const kept = await runChild(BINARY_V8_FLAGS, budget, 0);
  assert.ok(kept !== null, "the binaries' V8 flags expose gc()");
  const at = kept.madeAtCollections;
  assert.equal(at.length, 3, `collections when ${at.join(", ")} bytes were made`);
  // The first comes at once (nothing collected before: all the heap counts as growth); the
  // next ones each once the budget's worth was made, no sooner (a tick makes 1 to 5 MiB).
  for (let i = 1; i < at.length; i++) {
    assert.ok(at[i]! - at[i - 1]! >= budget / 2, `collections at ${at.join(", ")} bytes made`);
  }
});

Deno.test("keepHeapSmall leaves a process under its floor alone", async () => {
  const kept = await runChild(BINARY_V8_FLAGS, 2 * MiB, 1024 * 1024 * MiB);
  assert.ok(kept !== null);
  assert.deepEqual(kept.madeAtCollections, []);
  assert.ok(kept.made >= 200 * MiB);
});

Deno.test("keepHeapSmall does nothing without gc() (no --expose-gc)", async () => {
  assert.equal(await runChild(["--v8-flags=--max-semi-space-size=1"], 2 * MiB, 0), null);
});
