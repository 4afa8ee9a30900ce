/** What a replica fetches in ranges and holds of each, across connections: by tables. */
import { PartialContents } from "../../lib/replication/partial_contents.ts";
import { RANGE_MAX_BYTES, RANGE_MIN_BYTES } from "../../lib/replication/content_range.ts";
import { assert, assertEquals, assertThrows } from "./_assert.ts";

const A = "aa".repeat(32);
const B = "bb".repeat(32);
const C = "cc".repeat(32);

Deno.test("PartialContents: what a connection lost sets the range size and what is fetched in ranges", () => {
  const table: {
    name: string;
    lost: { hash: string; bytes: number; size?: number }[];
    rangeBytes: number;
    ranged: string[];
  }[] = [
    { name: "nothing lost", lost: [], rangeBytes: RANGE_MAX_BYTES, ranged: [] },
    {
      name: "a whole content larger than half itself",
      lost: [{ hash: A, bytes: 300_000, size: 300_000 }],
      rangeBytes: 150_000,
      ranged: [A],
    },
    {
      name: "the largest answer lost sets the size; smaller contents stay whole",
      lost: [
        { hash: A, bytes: 300_000, size: 300_000 },
        { hash: B, bytes: 100_000, size: 100_000 },
        { hash: C, bytes: 150_000, size: 150_000 },
      ],
      rangeBytes: 150_000,
      ranged: [A],
    },
    {
      name: "never under the smallest range",
      lost: [{ hash: A, bytes: 5_000, size: 5_000 }],
      rangeBytes: RANGE_MIN_BYTES,
      ranged: [A],
    },
    {
      name: "a content of unknown size (or chunked) is never fetched in ranges",
      lost: [{ hash: A, bytes: 300_000 }, { hash: B, bytes: 5_000_000, size: 5_000_000 }],
      rangeBytes: RANGE_MAX_BYTES,
      ranged: [],
    },
    {
      name: "a range lost halves the size again",
      lost: [{ hash: A, bytes: 40_000 }],
      rangeBytes: 20_000,
      ranged: [],
    },
  ];
  for (const { name, lost, rangeBytes, ranged } of table) {
    const partials = new PartialContents();
    partials.lost(lost);
    assertEquals(partials.rangeBytes, rangeBytes, name);
    assertEquals([A, B, C].filter((hash) => partials.sizeOf(hash) !== undefined), ranged, name);
  }
});

Deno.test("PartialContents: ranges received fill the gaps, in any order, until the content is complete", () => {
  const partials = new PartialContents();
  partials.lost([{ hash: A, bytes: 100_000, size: 100_000 }]); // ranges of 50,000
  const offsets = (hash: string) => partials.missing(hash).map((r) => [r.offset, r.length]);
  assertEquals(offsets(A), [[0, 50_000], [50_000, 50_000]]);
  const bytes = Uint8Array.from({ length: 100_000 }, (_, i) => i % 251);
  partials.received(A, 60_000, bytes.subarray(60_000, 70_000)); // the size doubles: 100,000
  assertEquals(partials.rangeBytes, 100_000);
  assertEquals(offsets(A), [[0, 60_000], [70_000, 30_000]]);
  assertEquals(partials.complete(A), null);
  partials.received(A, 0, bytes.subarray(0, 60_000));
  partials.received(A, 65_000, bytes.subarray(65_000, 100_000)); // overlapping what is there
  assertEquals(offsets(A), []);
  assertEquals(partials.complete(A), bytes);
  assertEquals(partials.heldBytes, 100_000);
  partials.forget(A);
  assertEquals(partials.heldBytes, 0);
  assertEquals(partials.sizeOf(A), undefined);
  assertEquals(offsets(A), []);
  partials.received(A, 0, bytes); // not fetched in ranges: ignored
  assertEquals(partials.heldBytes, 0);
});

Deno.test("PartialContents: a range past the content's end is refused; the size never passes its largest", () => {
  const partials = new PartialContents();
  partials.lost([{ hash: A, bytes: 10_000, size: 10_000 }]);
  assertThrows(() => partials.received(A, 9_000, new Uint8Array(2_000)), RangeError, "runs past");
  for (let i = 0; i < 30; i++) partials.received(A, 0, new Uint8Array(10));
  assertEquals(partials.rangeBytes, RANGE_MAX_BYTES);
});

Deno.test("PartialContents: holds at most its bytes, dropping the least recently used partial content", () => {
  const partials = new PartialContents(250_000);
  partials.lost([
    { hash: A, bytes: 100_000, size: 100_000 },
    { hash: B, bytes: 100_000, size: 100_000 },
    { hash: C, bytes: 100_000, size: 100_000 },
  ]);
  partials.received(A, 0, new Uint8Array(10));
  partials.received(B, 0, new Uint8Array(10));
  partials.received(A, 10, new Uint8Array(10)); // A used last
  partials.received(C, 0, new Uint8Array(10)); // no room for three: B dropped
  assertEquals(partials.heldBytes, 200_000);
  assertEquals(partials.sizeOf(B), undefined, "the least recently used is dropped");
  assert(partials.sizeOf(A) !== undefined && partials.sizeOf(C) !== undefined);
  // A content larger than all the room is fetched whole instead.
  const small = new PartialContents(50_000);
  small.lost([{ hash: A, bytes: 100_000, size: 100_000 }]);
  small.received(A, 0, new Uint8Array(10));
  assertEquals(small.sizeOf(A), undefined);
  assertEquals(small.heldBytes, 0);
});
