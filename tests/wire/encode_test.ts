import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import {
  decodeMessage,
  encodeFrame,
  encodeMessage,
  I64_MAX,
  I64_MIN,
  MAX_FRAME_PAYLOAD,
  U64_MAX,
  type WireMessage,
} from "../../lib/wire/mod.ts";

const ack = (n: bigint): WireMessage => ({ type: "Ack", up_to_sequence: n });
const beat = (n: bigint): WireMessage => ({
  type: "Heartbeat",
  agent_sequence: 0n,
  agent_iteration: n,
});

Deno.test("encodeMessage() checks u64 and i64 ranges", async (t) => {
  const table: { description: string; input: WireMessage; ok: boolean }[] = [
    { description: "u64 0", input: ack(0n), ok: true },
    { description: "u64 max", input: ack(U64_MAX), ok: true },
    { description: "u64 -1", input: ack(-1n), ok: false },
    { description: "u64 2^64", input: ack(U64_MAX + 1n), ok: false },
    { description: "i64 min", input: beat(I64_MIN), ok: true },
    { description: "i64 max", input: beat(I64_MAX), ok: true },
    { description: "i64 min - 1", input: beat(I64_MIN - 1n), ok: false },
    { description: "i64 max + 1", input: beat(I64_MAX + 1n), ok: false },
    {
      description: "i64 in a WriteBackResult pair",
      input: { type: "WriteBackResult", accepted: [[1n, I64_MAX + 1n]], rejected: [] },
      ok: false,
    },
  ];
  for (const { description, input, ok } of table) {
    await t.step(description, () => {
      if (ok) deepStrictEqual(decodeMessage(encodeMessage(input)), input);
      else throws(() => encodeMessage(input), RangeError);
    });
  }
});

Deno.test("encodeMessage() rejects fields of the wrong type with TypeError", async (t) => {
  const table: { description: string; input: unknown; mentions: string }[] = [
    { description: "number for u64", input: { type: "Ack", up_to_sequence: 1 }, mentions: "Ack" },
    {
      description: "unknown type",
      input: { type: "Nope" },
      mentions: "'Nope'",
    },
    {
      description: "array for bytes",
      input: {
        type: "ContentFetchResponse",
        content_hash: "",
        content: [1],
        size: 1n,
        chunk_manifest: null,
      },
      mentions: "ContentFetchResponse.content",
    },
    {
      description: "unknown operation",
      input: {
        type: "WriteBack",
        sandbox_id: "s",
        entries: [{
          local_seq: 1n,
          filepath: "a",
          operation: { type: "Move" },
          content_hash: null,
          content_bytes: null,
          size: 0n,
          permissions: 0n,
          is_deletion: false,
          master_rowid_seen: 0n,
        }],
      },
      mentions: "'Move'",
    },
  ];
  for (const { description, input, mentions } of table) {
    await t.step(description, () => {
      throws(() => encodeMessage(input as WireMessage), (e: unknown) => {
        strictEqual(e instanceof TypeError, true);
        strictEqual((e as Error).message.includes(mentions), true, (e as Error).message);
        return true;
      });
    });
  }
});

Deno.test("encodeMessage() writes non-ASCII and long strings as exact UTF-8", async (t) => {
  const texts = ["", "a", "é", "日本語", "🦀", "x".repeat(65), "é".repeat(3000), "🦀".repeat(5000)];
  for (const text of texts) {
    await t.step(`${text.length} UTF-16 units`, () => {
      const msg: WireMessage = { type: "CatchupRequest", sandbox_id: text, since_sequence: 5n };
      const payload = encodeMessage(msg);
      const utf8 = new TextEncoder().encode(text);
      strictEqual(payload.length, 4 + 8 + utf8.length + 8);
      deepStrictEqual(payload.subarray(12, 12 + utf8.length), utf8);
      deepStrictEqual(decodeMessage(payload), msg);
    });
  }
});

Deno.test("encodeFrame() results stay intact when many are encoded in a row", () => {
  const frames: Uint8Array[] = [];
  const msgs: WireMessage[] = [];
  for (let i = 0; i < 3000; i++) {
    const msg: WireMessage = {
      type: "Notification",
      sequence: BigInt(i),
      filepath: i % 7 === 0 ? `dir/ünï-${i}` : `dir/file-${i}`,
      content_hash: "h".repeat(i % 100),
      size: BigInt(i),
      permissions: 0o100644n,
      is_deletion: i % 2 === 0,
      inline_content: i % 3 === 0 ? null : new Uint8Array(i % 5000).fill(i & 0xff),
    };
    msgs.push(msg);
    frames.push(encodeFrame(msg));
  }
  for (let i = 0; i < msgs.length; i++) {
    const frame = frames[i]!;
    strictEqual(new DataView(frame.buffer, frame.byteOffset).getUint32(0, true), frame.length - 4);
    deepStrictEqual(decodeMessage(frame.subarray(4)), msgs[i]);
  }
});

Deno.test("encodeFrame() refuses a payload above MAX_FRAME_PAYLOAD", () => {
  const content = new Uint8Array(MAX_FRAME_PAYLOAD);
  const msg: WireMessage = {
    type: "ContentFetchResponse",
    content_hash: "",
    content,
    size: 0n,
    chunk_manifest: null,
  };
  throws(() => encodeFrame(msg), RangeError);
});

Deno.test("encodeMessage() writes a lone surrogate as U+FFFD, as a Rust String holds it", () => {
  const payload = encodeMessage({ type: "ContentNotFound", content_hash: "a\uD800b" });
  deepStrictEqual([...payload.subarray(4)], [5, 0, 0, 0, 0, 0, 0, 0, 0x61, 0xef, 0xbf, 0xbd, 0x62]);
  deepStrictEqual(decodeMessage(payload), { type: "ContentNotFound", content_hash: "a\uFFFDb" });
});

Deno.test("encodeMessage() rejects a WriteBack entry that is not an object", () => {
  const msg = { type: "WriteBack", sandbox_id: "s", entries: [null] };
  throws(() => encodeMessage(msg as unknown as WireMessage), TypeError);
});

Deno.test("encodeFrame() writes a non-ASCII path right when its message outgrows the shared slab", () => {
  // A small message starts in the shared slab; a long non-ASCII string asks for up to
  // three bytes per code unit, which can move the message to a buffer of its own. The
  // string's length and bytes must then be written at their place in the new buffer.
  const notification = (filepath: string): WireMessage => ({
    type: "Notification",
    sequence: 7n,
    filepath,
    content_hash: "a".repeat(64),
    size: 5000n,
    permissions: 0o100644n,
    is_deletion: false,
    inline_content: null,
  });
  const filler = notification("x".repeat(40));
  for (let length = 20; length <= 1400; length += 7) {
    const message = notification("é/".repeat(length >> 1) + "ß");
    // Fill the slab at every offset, so some encode lands right before its end.
    for (let fill = 0; fill < 40; fill++) {
      encodeFrame(filler);
      const frame = encodeFrame(message);
      deepStrictEqual(decodeMessage(frame.subarray(4)), message, `length ${length}`);
    }
  }
});
