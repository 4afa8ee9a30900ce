import assert from "node:assert/strict";
import {
  CHUNK_MAX_SIZE,
  CHUNK_MIN_SIZE,
  chunkBoundaries,
  Chunker,
  sha256Hex,
} from "../../lib/cas/mod.ts";
import { pseudoRandomBytes } from "./_helpers.ts";

const MiB = 1024 * 1024;
let big: Uint8Array | undefined;
/** 50 MiB of deterministic pseudo-random bytes, made once for the tests that need them. */
function bigContent(): Uint8Array {
  return big ??= pseudoRandomBytes(50 * MiB, 0x5eed);
}

function chunkHashes(bytes: Uint8Array): string[] {
  let start = 0;
  return chunkBoundaries(bytes).map((cut) => {
    const hash = sha256Hex(bytes.subarray(start, cut));
    start = cut;
    return hash;
  });
}

function assertWellFormed(cuts: number[], length: number): void {
  assert.equal(cuts.at(-1) ?? 0, length, "last cut is the end");
  let prev = 0;
  for (const [i, cut] of cuts.entries()) {
    const size = cut - prev;
    assert.ok(size <= CHUNK_MAX_SIZE, `chunk ${i} of ${size} bytes exceeds the max`);
    if (i < cuts.length - 1) {
      assert.ok(size >= CHUNK_MIN_SIZE, `chunk ${i} of ${size} bytes is under the min`);
    }
    assert.ok(size > 0);
    prev = cut;
  }
}

/** Feeds `bytes` to a Chunker in pieces of the given sizes (cycled) and returns the cuts. */
function streamedCuts(bytes: Uint8Array, sizes: number[]): number[] {
  const chunker = new Chunker();
  const cuts: number[] = [];
  let total = 0;
  const take = (chunk: Uint8Array) => {
    total += chunk.length;
    cuts.push(total);
  };
  let at = 0;
  for (let k = 0; at < bytes.length; k++) {
    const n = sizes[k % sizes.length]!;
    chunker.push(bytes.subarray(at, at + n)).forEach(take);
    at += n;
  }
  const last = chunker.finish();
  if (last !== null) take(last);
  return cuts;
}

Deno.test("chunkBoundaries() cuts small and special inputs as expected", async (t) => {
  const cases = [
    { description: "empty", input: new Uint8Array(), expected: [] as number[] },
    { description: "one byte", input: new Uint8Array(1), expected: [1] },
    {
      description: "just under the min",
      input: pseudoRandomBytes(CHUNK_MIN_SIZE - 1, 1),
      expected: [CHUNK_MIN_SIZE - 1],
    },
    {
      description: "exactly the min",
      input: pseudoRandomBytes(CHUNK_MIN_SIZE, 2),
      expected: [CHUNK_MIN_SIZE],
    },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => assert.deepEqual(chunkBoundaries(input), expected));
  }
});

Deno.test("chunkBoundaries() keeps every chunk within min and max, deterministically", async (t) => {
  const cases = [
    { description: "random 20 MiB", input: pseudoRandomBytes(20 * MiB, 7) },
    { description: "zeros 10 MiB", input: new Uint8Array(10 * MiB) },
    {
      description: "repeating 251-byte pattern 9 MiB",
      input: new Uint8Array(9 * MiB).map((_, i) => i % 251),
    },
  ];
  for (const { description, input } of cases) {
    await t.step(description, () => {
      const cuts = chunkBoundaries(input);
      assertWellFormed(cuts, input.length);
      assert.deepEqual(chunkBoundaries(input), cuts, "same input, same cuts");
    });
  }
});

Deno.test("chunkBoundaries() averages about 1 MiB on random content", () => {
  const bytes = bigContent();
  const cuts = chunkBoundaries(bytes);
  const average = bytes.length / cuts.length;
  assert.ok(average > 0.75 * MiB && average < 1.5 * MiB, `average chunk ${average} bytes`);
});

Deno.test("Chunker makes the same cuts as chunkBoundaries() whatever the piece sizes", async (t) => {
  const bytes = pseudoRandomBytes(14 * MiB + 123, 11);
  const expected = chunkBoundaries(bytes);
  assert.ok(expected.length > 5);
  const cases = [
    { description: "1 MiB pieces", sizes: [MiB] },
    { description: "odd 64 KiB pieces", sizes: [65536 + 7] },
    { description: "max-size pieces", sizes: [CHUNK_MAX_SIZE] },
    { description: "pieces larger than the max", sizes: [5 * MiB + 3] },
    { description: "mixed pieces", sizes: [1, 300_001, 17, 2 * MiB, 4096, 777_777] },
    { description: "one piece", sizes: [bytes.length] },
  ];
  for (const { description, sizes } of cases) {
    await t.step(description, () => assert.deepEqual(streamedCuts(bytes, sizes), expected));
  }
  await t.step("single bytes over the first chunks", () => {
    const head = bytes.subarray(0, expected[1]! + 10);
    assert.deepEqual(streamedCuts(head, [1]), chunkBoundaries(head));
  });
  await t.step("a finished Chunker can be reused", () => {
    const chunker = new Chunker();
    chunker.push(bytes.subarray(0, 1000));
    assert.equal(chunker.finish()?.length, 1000);
    assert.equal(chunker.finish(), null);
    assert.deepEqual(streamedCuts(bytes, [MiB]), expected);
  });
});

Deno.test("chunkBoundaries() changes at most 3 chunks for a one-byte edit in 50 MiB", () => {
  const bytes = bigContent();
  const before = new Set(chunkHashes(bytes));
  const edited = bytes.slice();
  const middle = edited.length >> 1;
  edited[middle] = edited[middle]! ^ 0xff;
  const fresh = chunkHashes(edited).filter((h) => !before.has(h));
  assert.ok(fresh.length >= 1 && fresh.length <= 3, `${fresh.length} new chunks`);
});

Deno.test("chunkBoundaries() falls back in step after an insertion near the start", () => {
  const bytes = bigContent();
  const inserted = 1000;
  const at = 5000;
  const edited = new Uint8Array(bytes.length + inserted);
  edited.set(bytes.subarray(0, at));
  edited.set(pseudoRandomBytes(inserted, 99), at);
  edited.set(bytes.subarray(at), at + inserted);
  const oldCuts = chunkBoundaries(bytes);
  const newCuts = new Set(chunkBoundaries(edited).map((cut) => cut - inserted));
  const missed = oldCuts.filter((cut) => !newCuts.has(cut));
  assert.ok(missed.length <= 1, `old cuts not found shifted: ${missed.join(", ")}`);
  const before = new Set(chunkHashes(bytes));
  const fresh = chunkHashes(edited).filter((h) => !before.has(h));
  assert.ok(fresh.length <= 2, `${fresh.length} new chunks`);
});
