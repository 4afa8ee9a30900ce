/**
 * Range keys, their answers' checks, and the master's answer to one, against a real CAS.
 */
import { Cas } from "../../lib/cas/mod.ts";
import {
  parseRangeKey,
  RANGE_MAX_BYTES,
  rangeAnswered,
  rangeKey,
} from "../../lib/replication/content_range.ts";
import { answerContentFetch } from "../../lib/replication/mod.ts";
import type { ContentFetchResponseMessage } from "../../lib/wire/mod.ts";
import { assert, assertEquals, assertThrows } from "./_assert.ts";
import { pseudoRandomBytes } from "./_harness.ts";

const H = "0f".repeat(32);

Deno.test("parseRangeKey reads only well-formed range keys", () => {
  const table: [string, { offset: number; length: number } | null][] = [
    [`${H}@0+4096`, { offset: 0, length: 4096 }],
    [`${H}@123456789012345+1`, { offset: 123456789012345, length: 1 }],
    [H, null], // a content hash
    [`${H}@0+0`, null], // nothing asked for
    [`${H}@01+5`, null], // a leading zero
    [`${H}@-1+5`, null],
    [`${H}@1+5 `, null],
    [`${H}@1234567890123456+5`, null], // 16 digits: past safe integers
    [`${"0F".repeat(32)}@0+5`, null], // hashes are lowercase
    [`${H.slice(2)}@0+5`, null],
    [`${H}@1.5+5`, null],
    [`${H}@0x10+5`, null],
    ["", null],
  ];
  for (const [key, expected] of table) {
    const parsed = parseRangeKey(key);
    assertEquals(parsed, expected === null ? null : { hash: H, ...expected }, key);
    if (parsed) assertEquals(rangeKey(parsed), key);
  }
});

Deno.test("rangeAnswered accepts one byte to the length asked for, within the content, and nothing else", () => {
  const range = { hash: H, offset: 1000, length: 500 };
  const answer = (content: number, size: bigint, manifest: string | null = null) =>
    ({
      type: "ContentFetchResponse",
      content_hash: rangeKey(range),
      content: new Uint8Array(content),
      size,
      chunk_manifest: manifest,
    }) satisfies ContentFetchResponseMessage;
  // [what, the content's size, the answer, the problem found]
  const table: [string, number, ContentFetchResponseMessage, string | null][] = [
    ["the whole range", 2000, answer(500, 2000n), null],
    ["fewer bytes (the master's frame)", 2000, answer(1, 2000n), null],
    ["the content's end", 1300, answer(300, 1300n), null],
    ["no bytes", 2000, answer(0, 2000n), "holds 0 bytes"],
    ["more than asked for", 2000, answer(501, 2000n), "holds 501 bytes"],
    ["past the content's end", 1300, answer(400, 1300n), "holds 400 bytes"],
    ["another size", 2000, answer(500, 2001n), "size as 2001"],
    ["a manifest", 2000, answer(500, 2000n, "{}"), "chunk manifest"],
  ];
  for (const [name, size, given, problem] of table) {
    if (problem === null) {
      assertEquals(rangeAnswered(range, size, given), { bytes: given.content, size }, name);
    } else assertThrows(() => rangeAnswered(range, size, given), Error, problem);
  }
  // A size not known yet is taken from the answer: that of a content stored whole.
  assertEquals(rangeAnswered(range, null, answer(500, 2000n)).size, 2000);
  assertThrows(() => rangeAnswered(range, null, answer(500, 0n)), Error, "stored whole");
  assertThrows(() => rangeAnswered(range, null, answer(500, 5n << 20n)), Error, "stored whole");
  assertThrows(() => rangeAnswered(range, null, answer(500, 1300n)), Error, "holds 500 bytes");
});

Deno.test("the master answers a range of a content stored whole (a row or a file), within its frame, and refuses what it cannot slice", async () => {
  const dir = await Deno.makeTempDir({ prefix: "chronicle-range-answer-" });
  try {
    const cas = await Cas.open(dir);
    const bytes = pseudoRandomBytes(3_000_000, 1);
    const { hash } = await cas.putBytes(bytes);
    const row = pseudoRandomBytes(20_000, 4); // under SMALL_OBJECT_LIMIT: a row, when a db
    const small = await cas.putBytes(row);
    const chunked = await cas.putBytes(pseudoRandomBytes(5 * 1024 * 1024, 2));
    assert(chunked.chunked);
    const ask = (key: string, maxPayload = 100 * 1024 * 1024) =>
      answerContentFetch(cas, key, maxPayload);
    const slice = async (key: string, size: bigint, maxPayload?: number) => {
      const answer = await ask(key, maxPayload);
      assertEquals(answer.type, "ContentFetchResponse", key);
      const { content, content_hash, chunk_manifest } = answer as ContentFetchResponseMessage;
      assertEquals([content_hash, (answer as ContentFetchResponseMessage).size, chunk_manifest], [
        key,
        size,
        null,
      ]);
      return content;
    };
    const at = (offset: number, length: number) => rangeKey({ hash, offset, length });
    const first = await slice(at(1000, 5000), 3_000_000n);
    assertEquals(first, bytes.subarray(1000, 6000));
    assertEquals(first.buffer.byteLength, 5000, "only the slice: not a view of the content");
    assertEquals(await slice(at(2_999_000, 5000), 3_000_000n), bytes.subarray(2_999_000));
    assertEquals((await slice(at(0, 3_000_000), 3_000_000n)).length, RANGE_MAX_BYTES);
    assertEquals((await slice(at(0, 100_000), 3_000_000n, 10_256)).length, 10_000, "its frame");
    const fromRow = await slice(rangeKey({ hash: small.hash, offset: 100, length: 50 }), 20_000n);
    assertEquals(fromRow, row.subarray(100, 150));
    for (
      const key of [
        at(3_000_000, 10), // at the end
        at(3_000_001, 10), // past it
        rangeKey({ hash: chunked.hash, offset: 0, length: 10 }), // chunked: asked by chunks
        rangeKey({ hash: "ee".repeat(32), offset: 0, length: 10 }), // not stored
        `${hash}@0+0`,
        `${hash}@0`,
      ]
    ) {
      assertEquals(await ask(key), { type: "ContentNotFound", content_hash: key }, key);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
