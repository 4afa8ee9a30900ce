import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { decodeMessage, encodeMessage, type WireMessage } from "../../lib/wire/mod.ts";

/** Little-endian helpers to build payloads by hand. */
const u32 = (n: number) => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, n >>> 24];
const u64 = (n: number) => [...u32(n), 0, 0, 0, 0];
const str = (s: string) => {
  const b = new TextEncoder().encode(s);
  return [...u64(b.length), ...b];
};
const bytes = (...parts: number[][]) => new Uint8Array(parts.flat());

const entry = (op: number[]) => [
  ...u64(1),
  ...str("a"),
  ...op,
  0,
  0,
  ...u64(0),
  ...u64(0),
  0,
  ...u64(0),
];

Deno.test("decodeMessage() rejects malformed payloads with a code naming the problem", async (t) => {
  const table: { description: string; input: Uint8Array; code: string; mentions: string }[] = [
    {
      description: "empty payload",
      input: bytes([]),
      code: "unexpected_end",
      mentions: "WireMessage",
    },
    {
      description: "variant index 12",
      input: bytes(u32(12)),
      code: "unknown_variant",
      mentions: "'12'",
    },
    {
      description: "variant index 2^32-1",
      input: bytes(u32(0xffffffff)),
      code: "unknown_variant",
      mentions: "'4294967295'",
    },
    {
      description: "unknown WriteOperation index 4",
      input: bytes(u32(2), str("sb"), u64(1), entry(u32(4))),
      code: "unknown_variant",
      mentions: "WriteOperation",
    },
    {
      description: "u64 cut short",
      input: bytes(u32(6), [1, 2, 3]),
      code: "unexpected_end",
      mentions: "Ack.up_to_sequence",
    },
    {
      description: "bool byte 255",
      input: bytes(u32(5), [255], u64(0)),
      code: "invalid_bool",
      mentions: "BarrierConfirmation.satisfied",
    },
    {
      description: "Notification Option tag 7",
      input: bytes(u32(0), u64(1), str("p"), str("h"), u64(0), u64(0), [0, 7]),
      code: "invalid_option",
      mentions: "Notification.inline_content",
    },
    {
      description: "string length one past the end",
      input: bytes(u32(7), u64(4), [0x61, 0x62, 0x63]),
      code: "length_past_end",
      mentions: "ContentFetchRequest.content_hash",
    },
    {
      description: "string length above 2^32",
      input: bytes(u32(7), [0, 0, 0, 0, 1, 0, 0, 0]),
      code: "length_past_end",
      mentions: "'4294967296'",
    },
    {
      description: "entry count no payload could hold",
      input: bytes(u32(2), str("sb"), u64(1_000_000), entry(u32(0))),
      code: "length_past_end",
      mentions: "WriteBack.entries",
    },
    {
      description: "accepted count past the end",
      input: bytes(u32(3), u64(2), u64(1), u64(2)),
      code: "length_past_end",
      mentions: "WriteBackResult.accepted",
    },
    {
      description: "overlong UTF-8 encoding of '/'",
      input: bytes(u32(9), u64(2), [0xc0, 0xaf]),
      code: "invalid_utf8",
      mentions: "ContentNotFound.content_hash",
    },
    {
      description: "UTF-8 encoded surrogate",
      input: bytes(u32(11), u64(3), [0xed, 0xa0, 0x80], u64(0)),
      code: "invalid_utf8",
      mentions: "FullResyncRequired.reason",
    },
    {
      description: "bytes after a whole message",
      input: bytes(u32(4), u64(1), [0, 0]),
      code: "trailing_bytes",
      mentions: "'2' trailing bytes",
    },
  ];
  for (const { description, input, code, mentions } of table) {
    await t.step(description, () => {
      throws(() => decodeMessage(input), (error: unknown) => {
        const e = error as { name: string; code: string; message: string };
        strictEqual(e.name, "WireError");
        strictEqual(e.code, code);
        strictEqual(e.message.includes(mentions), true, e.message);
        return true;
      });
    });
  }
});

Deno.test("decodeMessage() returns byte vectors as views aliasing the payload", () => {
  const msg: WireMessage = {
    type: "ContentFetchResponse",
    content_hash: "h",
    content: new Uint8Array([1, 2, 3, 4]),
    size: 4n,
    chunk_manifest: null,
  };
  const payload = encodeMessage(msg).slice();
  const got = decodeMessage(payload);
  if (got.type !== "ContentFetchResponse") throw new Error("wrong variant");
  strictEqual(got.content.buffer, payload.buffer);
  payload[4 + 8 + 1 + 8] = 99;
  strictEqual(got.content[0], 99);
});

Deno.test("decodeMessage() keeps a leading byte order mark and non-ASCII text", () => {
  for (const text of ["\uFEFFbom", "\uFEFF", "é".repeat(40), "🦀".repeat(100), "a".repeat(200)]) {
    const msg: WireMessage = { type: "ContentNotFound", content_hash: text };
    deepStrictEqual(decodeMessage(encodeMessage(msg)), msg);
  }
});

Deno.test("decodeMessage() reads payloads that are views at an offset of a larger buffer", () => {
  const msg: WireMessage = {
    type: "Heartbeat",
    agent_sequence: 0xffff_ffff_ffff_fffen,
    agent_iteration: -2n,
  };
  const payload = encodeMessage(msg);
  const big = new Uint8Array(payload.length + 13);
  big.set(payload, 7);
  deepStrictEqual(decodeMessage(big.subarray(7, 7 + payload.length)), msg);
});
