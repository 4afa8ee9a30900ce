import { deepStrictEqual, rejects, strictEqual, throws } from "node:assert/strict";
import {
  encodeFrame,
  FrameReader,
  MAX_FRAME_PAYLOAD,
  readFrames,
  toJson,
  type WireMessage,
} from "../../lib/wire/mod.ts";
import { INVALID, prng, readVector } from "./_vectors.ts";

const allFrames = readVector("all.frames");
const allJsonl = new TextDecoder().decode(readVector("all.jsonl"));

/** Cuts `bytes` into fresh chunks whose sizes `size()` chooses. */
function pieces(bytes: Uint8Array, size: () => number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0; at < bytes.length;) {
    const n = Math.max(1, size());
    out.push(bytes.slice(at, at + n));
    at += n;
  }
  return out;
}

function feed(chunks: Uint8Array[]): string {
  const reader = new FrameReader();
  let out = "";
  for (const chunk of chunks) {
    reader.push(chunk);
    for (const msg of reader) out += toJson(msg) + "\n";
  }
  reader.end();
  strictEqual(reader.bufferedBytes, 0);
  return out;
}

Deno.test("FrameReader decodes all.frames into all.jsonl however it is split", async (t) => {
  strictEqual(allJsonl.split("\n").length - 1, 33);
  await t.step("one chunk", () => strictEqual(feed([allFrames]), allJsonl));
  await t.step("1-byte pieces", () => strictEqual(feed(pieces(allFrames, () => 1)), allJsonl));
  await t.step("5-byte pieces", () => strictEqual(feed(pieces(allFrames, () => 5)), allJsonl));
  for (const seed of [1, 2, 3, 42, 2024]) {
    await t.step(`random pieces, seed ${seed}`, () => {
      const random = prng(seed);
      const chunks = pieces(allFrames, () => Math.floor(random() * 700));
      strictEqual(feed(chunks), allJsonl);
    });
  }
});

Deno.test("readFrames() decodes all.frames from a ReadableStream and an async iterable", async () => {
  const collect = async (source: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>) => {
    let out = "";
    for await (const msg of readFrames(source)) out += toJson(msg) + "\n";
    return out;
  };
  const random = prng(7);
  strictEqual(await collect(ReadableStream.from(pieces(allFrames, () => 3))), allJsonl);
  async function* gen() {
    yield* pieces(allFrames, () => Math.floor(random() * 100));
  }
  strictEqual(await collect(gen()), allJsonl);
});

Deno.test("FrameReader rejects every invalid vector with its own code", async (t) => {
  for (const [name, code] of Object.entries(INVALID)) {
    await t.step(name, async () => {
      const bytes = readVector(`invalid/${name}.bin`);
      throws(() => {
        const reader = new FrameReader();
        reader.push(bytes);
        for (const _ of reader) { /* drain */ }
        reader.end();
      }, { name: "WireError", code });
      // The same outcome when the bytes trickle in one at a time, after good frames.
      const messages: WireMessage[] = [];
      await rejects(async () => {
        for await (const msg of readFrames(ReadableStream.from(pieces(bytes, () => 1)))) {
          messages.push(msg);
        }
      }, { name: "WireError", code });
      const joined = new Uint8Array(allFrames.length + bytes.length);
      joined.set(allFrames);
      joined.set(bytes, allFrames.length);
      let good = 0;
      await rejects(async () => {
        for await (const _ of readFrames(ReadableStream.from(pieces(joined, () => 999)))) good++;
      }, { code });
      strictEqual(good, 33);
    });
  }
});

Deno.test("FrameReader rejects an oversized header before buffering its payload", () => {
  const reader = new FrameReader();
  const header = new Uint8Array([0x01, 0x00, 0x40, 0x06]); // 104857601
  reader.push(header.subarray(0, 3));
  strictEqual(reader.nextPayload(), null);
  throws(() => reader.push(header.subarray(3)), { code: "oversized_frame" });
  strictEqual(reader.bufferedBytes, 0);
  // Failed for good: further bytes are refused with the same error.
  throws(() => reader.push(new Uint8Array(10)), { code: "oversized_frame" });
  throws(() => reader.end(), { code: "oversized_frame" });

  const max = new FrameReader();
  const ok = new Uint8Array(4);
  new DataView(ok.buffer).setUint32(0, MAX_FRAME_PAYLOAD, true);
  max.push(ok);
  strictEqual(max.nextPayload(), null);
  throws(() => max.end(), { code: "truncated_payload" });

  const small = new FrameReader({ maxPayload: 8 });
  throws(() => small.push(encodeFrame({ type: "Ack", up_to_sequence: 1n })), {
    code: "oversized_frame",
  });
});

Deno.test("FrameReader hands out views for frames inside one chunk", () => {
  const a = encodeFrame({ type: "Ack", up_to_sequence: 1n });
  const b = encodeFrame({ type: "BarrierRequest", sequence: 2n });
  const chunk = new Uint8Array(a.length + b.length);
  chunk.set(a);
  chunk.set(b, a.length);
  const reader = new FrameReader();
  reader.push(chunk);
  const first = reader.nextPayload()!;
  strictEqual(first.buffer, chunk.buffer);
  strictEqual(first.byteOffset, 4);
  const second = reader.nextPayload()!;
  strictEqual(second.buffer, chunk.buffer);
  strictEqual(reader.nextPayload(), null);
  reader.end();
});

Deno.test("FrameReader reassembles a 1 MiB frame pushed in 4 KiB pieces", () => {
  const content = new Uint8Array(1 << 20);
  for (let i = 0; i < content.length; i++) content[i] = i % 251;
  const msg: WireMessage = {
    type: "ContentFetchResponse",
    content_hash: "big",
    content,
    size: BigInt(content.length),
    chunk_manifest: null,
  };
  const frame = encodeFrame(msg);
  const reader = new FrameReader();
  const got: WireMessage[] = [];
  for (const chunk of pieces(frame, () => 4096)) {
    reader.push(chunk);
    got.push(...reader);
  }
  reader.end();
  deepStrictEqual(got, [msg]);
});

Deno.test("FrameReader.end() reports a stream cut inside a header or a payload", () => {
  const frame = encodeFrame({ type: "Ack", up_to_sequence: 1n });
  for (let cut = 1; cut < frame.length; cut++) {
    const reader = new FrameReader();
    reader.push(frame.slice(0, cut));
    strictEqual(reader.nextMessage(), null);
    throws(() => reader.end(), { code: cut < 4 ? "truncated_header" : "truncated_payload" });
  }
});
