import assert from "node:assert/strict";
import { BINARY_V8_FLAGS } from "../../lib/cli/mod.ts";
import { collectionDue, type HeapReading } from "../../lib/memory/mod.ts";

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
  ];
  for (const [name, reading, due] of cases) assert.equal(collectionDue(reading, limits), due, name);
});

/** Runs `_keeper_child.ts` with these V8 flags and limits; what it printed. */
async function runChild(
  v8Flags: string[],
  budget: number,
  rssFloor: number,
): Promise<{ collections: number; made: number } | null> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...v8Flags,
      new URL("./_keeper_child.ts", import.meta.url).pathname,
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

Deno.test("keepHeapSmall collects a process's garbage as it piles up, with gc() exposed", async () => {
  const kept = await runChild(["--v8-flags=--expose-gc"], 2 * MiB, 0);
  assert.ok(kept !== null);
  assert.equal(kept.collections, 3);
  // Three collections of at least 2 MiB of growth each: never more often than the budget.
  assert.ok(kept.made >= 3 * 2 * MiB, `${kept.made} bytes made`);
});

Deno.test("keepHeapSmall leaves a process under its floor alone", async () => {
  const kept = await runChild(["--v8-flags=--expose-gc"], 2 * MiB, 1024 * 1024 * MiB);
  assert.deepEqual(kept, { collections: 0, made: kept!.made });
  assert.ok(kept!.made >= 200 * MiB);
});

Deno.test("keepHeapSmall does nothing without gc() (no --expose-gc)", async () => {
  assert.equal(await runChild([], 2 * MiB, 0), null);
});

Deno.test("the binaries' V8 flags expose gc(): the keeper runs in every chronicle process", async () => {
  const kept = await runChild([...BINARY_V8_FLAGS], 2 * MiB, 0);
  assert.equal(kept?.collections, 3);
});
