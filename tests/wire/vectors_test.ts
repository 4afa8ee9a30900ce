import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  decodeMessage,
  decodeWsMessage,
  encodeFrame,
  encodeMessage,
  fromJson,
  toJson,
  WIRE_MESSAGE_TYPES,
} from "../../lib/wire/mod.ts";
import { loadVectors } from "./_vectors.ts";

const vectors = loadVectors();

Deno.test("bincode vectors: all 33 are present and cover every variant", () => {
  strictEqual(vectors.length, 33);
  const seen = new Set(vectors.map((v) => decodeWsMessage(v.frame).type));
  deepStrictEqual([...seen].sort(), [...WIRE_MESSAGE_TYPES].sort());
});

Deno.test("decodeMessage() of each vector gives its JSON text exactly via toJson()", async (t) => {
  for (const v of vectors) {
    await t.step(v.name, () => {
      const length = new DataView(v.frame.buffer).getUint32(0, true);
      strictEqual(length, v.frame.length - 4);
      const msg = decodeMessage(v.frame.subarray(4));
      strictEqual(toJson(msg) + "\n", v.json);
    });
  }
});

Deno.test("encodeFrame() of fromJson() of each vector gives its bytes exactly", async (t) => {
  for (const v of vectors) {
    await t.step(v.name, () => {
      const msg = fromJson(v.json);
      deepStrictEqual(encodeFrame(msg), v.frame);
      deepStrictEqual(encodeMessage(msg), v.frame.subarray(4));
      deepStrictEqual(decodeWsMessage(v.frame), msg);
    });
  }
});
