/** What a replica fetches in ranges and holds of each, across connections: by tables. */
import { CHUNK_MAX_SIZE } from "../../lib/cas/mod.ts";
import { type LostFetch, PartialContents } from "../../lib/replication/partial_contents.ts";
import { RANGE_MAX_BYTES, RANGE_MIN_BYTES } from "../../lib/replication/content_range.ts";
import { assert, assertEquals, assertThrows } from "./_assert.ts";

const A = "aa".repeat(32);
const B = "bb".repeat(32);
const C = "cc".repeat(32);

Deno.test("PartialContents: what a connection's end cut short sets the range size and what is fetched in ranges", () => {
  const table: { name: string; lost: LostFetch[]; rangeBytes: number; ranged: string[] }[] = [
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
      name: "a content of unknown size is fetched in ranges, its estimate changing nothing",
      lost: [{ hash: A, bytes: 4 * 1024 * 1024 }],
      rangeBytes: RANGE_MAX_BYTES,
      ranged: [A],
    },
    {
      name: "a chunk of the largest size is; a content over it (a manifest's) is not",
      lost: [
        { hash: A, bytes: CHUNK_MAX_SIZE, size: CHUNK_MAX_SIZE },
        { hash: B, bytes: CHUNK_MAX_SIZE + 1, size: CHUNK_MAX_SIZE + 1 },
      ],
      rangeBytes: RANGE_MAX_BYTES,
      ranged: [A],
    },
    {
      name: "a range lost halves the size, whatever else was lost",
      lost: [
        { hash: A, bytes: 4096, range: true },
        { hash: B, bytes: 3_000_000, size: 3_000_000 },
      ],
      rangeBytes: RANGE_MAX_BYTES / 2,
      ranged: [B],
    },
  ];
  for (const { name, lost, rangeBytes, ranged } of table) {
    const partials = new PartialContents();
    partials.connectionEnded(lost);
    assertEquals(partials.rangeBytes, rangeBytes, name);
    assertEquals([A, B, C].filter((hash) => partials.sizeOf(hash) !== undefined), ranged, name);
  }
});

Deno.test("PartialContents: the range size grows only once a connection carried four ranges' worth, and each end starts the count again", () => {
  const partials = new PartialContents();
  partials.connectionEnded([{ hash: A, bytes: 2_000_000, size: 2_000_000 }]);
  partials.connectionEnded([{ hash: A, bytes: 40_000, range: true }]); // 20,000 now
  assertEquals(partials.rangeBytes, 20_000);
  const range = new Uint8Array(20_000);
  for (let i = 0; i < 3; i++) partials.received(A, i * 20_000, range, 2_000_000);
  assertEquals(partials.rangeBytes, 20_000, "three ranges' worth: not yet");
  partials.received(A, 60_000, range, 2_000_000);
  assertEquals(partials.rangeBytes, 40_000, "four: doubled");
  for (let i = 4; i < 7; i++) partials.received(A, i * 20_000, range, 2_000_000);
  assertEquals(partials.rangeBytes, 40_000, "counted again from the change: 60,000 of 160,000");
  partials.connectionEnded([]); // a connection ending with nothing lost: the size stays
  assertEquals(partials.rangeBytes, 40_000);
  for (let i = 7; i < 14; i++) partials.received(A, i * 20_000, range, 2_000_000);
  assertEquals(partials.rangeBytes, 40_000, "140,000 carried by this connection: not yet");
  for (let i = 0; i < 1000; i++) partials.received(A, 0, range, 2_000_000); // 20 MB more
  assertEquals(partials.rangeBytes, RANGE_MAX_BYTES, "never past the largest range");
});

Deno.test("PartialContents: ranges received fill the gaps, in any order, until the content is complete and taken", () => {
  const partials = new PartialContents();
  partials.connectionEnded([{ hash: A, bytes: 100_000, size: 100_000 }]); // ranges of 50,000
  const offsets = (hash: string) => partials.missing(hash).map((r) => [r.offset, r.length]);
  assertEquals(offsets(A), [[0, 50_000], [50_000, 50_000]]);
  const bytes = Uint8Array.from({ length: 100_000 }, (_, i) => i % 251);
  partials.received(A, 60_000, bytes.subarray(60_000, 70_000), 100_000);
  assertEquals(offsets(A), [[0, 50_000], [50_000, 10_000], [70_000, 30_000]]);
  assertEquals(partials.take(A), null);
  partials.received(A, 0, bytes.subarray(0, 60_000), 100_000);
  partials.received(A, 65_000, bytes.subarray(65_000, 100_000), 100_000); // overlapping
  assertEquals(offsets(A), []);
  assertEquals(partials.heldBytes, 100_000);
  assertEquals(partials.take(A), bytes);
  assertEquals(partials.heldBytes, 0, "taken out");
  assertEquals(partials.sizeOf(A), undefined);
  assertEquals(offsets(A), []);
  partials.received(A, 0, bytes, 100_000); // not fetched in ranges: ignored
  assertEquals(partials.heldBytes, 0);
});

Deno.test("PartialContents: a range past the content's end is refused", () => {
  const partials = new PartialContents();
  partials.connectionEnded([{ hash: A, bytes: 10_000, size: 10_000 }]);
  assertThrows(
    () => partials.received(A, 9_000, new Uint8Array(2_000), 10_000),
    RangeError,
    "runs past",
  );
  assertThrows(() => partials.received(A, 0, new Uint8Array(10), 12_000), RangeError, "not 10000");
});

Deno.test("PartialContents: holds at most its bytes, dropping the least recently used partial content no fetch is filling", () => {
  const lost = (hash: string) => ({ hash, bytes: 100_000, size: 100_000 });
  const partials = new PartialContents(250_000);
  partials.connectionEnded([lost(A), lost(B), lost(C)]);
  partials.received(A, 0, new Uint8Array(10), 100_000);
  partials.received(B, 0, new Uint8Array(10), 100_000);
  partials.received(A, 10, new Uint8Array(10), 100_000); // A used last
  partials.received(C, 0, new Uint8Array(10), 100_000); // no room for three: B dropped
  assertEquals(partials.heldBytes, 200_000);
  assertEquals(partials.sizeOf(B), undefined, "the least recently used is dropped");
  assert(partials.sizeOf(A) !== undefined && partials.sizeOf(C) !== undefined);
  // One a fetch is filling is never dropped: the next one is, though more recently used.
  partials.connectionEnded([lost(B)]);
  partials.filling(A, true);
  partials.received(B, 0, new Uint8Array(10), 100_000);
  assert(partials.sizeOf(A) !== undefined, "being filled: kept");
  assertEquals(partials.sizeOf(C), undefined);
  // With no room at all (every other one being filled), a content is fetched whole.
  partials.filling(B, true);
  partials.connectionEnded([lost(C)]);
  partials.received(C, 0, new Uint8Array(10), 100_000);
  assertEquals(partials.sizeOf(C), undefined);
  assertEquals(partials.heldBytes, 200_000);
});

Deno.test("PartialContents: a content of unknown size asks for its first range alone, and learns its size from the answer", () => {
  const partials = new PartialContents();
  partials.connectionEnded([{ hash: A, bytes: 50_000, range: true }]); // ranges of 25,000
  partials.connectionEnded([{ hash: B, bytes: 4 * 1024 * 1024 }]);
  assertEquals(partials.sizeOf(B), null);
  assertEquals(partials.missing(B), [{ hash: B, offset: 0, length: 25_000 }]);
  partials.received(B, 0, new Uint8Array(25_000), 60_000);
  assertEquals(partials.sizeOf(B), 60_000);
  assertEquals(partials.missing(B).map((r) => [r.offset, r.length]), [[25_000, 25_000], [
    50_000,
    10_000,
  ]]);
  assertEquals(partials.heldBytes, 60_000);
});
