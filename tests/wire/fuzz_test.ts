import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  decodeMessage,
  encodeMessage,
  FrameReader,
  MAX_FRAME_PAYLOAD,
  WireError,
} from "../../lib/wire/mod.ts";
import { loadVectors, prng } from "./_vectors.ts";

const TIME_BUDGET_MS = 3000;

/** A mutated copy of `frame`: flipped, replaced, inserted, removed or cut bytes. */
function mutate(frame: Uint8Array, random: () => number): Uint8Array {
  let bytes = frame.slice();
  const edits = 1 + Math.floor(random() * 4);
  for (let e = 0; e < edits; e++) {
    const at = Math.floor(random() * Math.max(bytes.length, 1));
    switch (Math.floor(random() * 6)) {
      case 0:
        if (bytes.length > 0) bytes[at] = bytes[at]! ^ (1 << Math.floor(random() * 8));
        break;
      case 1:
        if (bytes.length > 0) bytes[at] = Math.floor(random() * 256);
        break;
      case 2: {
        const extra = Uint8Array.from(
          { length: 1 + Math.floor(random() * 8) },
          () => Math.floor(random() * 256),
        );
        const next = new Uint8Array(bytes.length + extra.length);
        next.set(bytes.subarray(0, at));
        next.set(extra, at);
        next.set(bytes.subarray(at), at + extra.length);
        bytes = next;
        break;
      }
      case 3:
        bytes = Uint8Array.from([...bytes.subarray(0, at), ...bytes.subarray(at + 1)]);
        break;
      case 4:
        bytes = bytes.slice(0, at);
        break;
      default: {
        // A length field somewhere set to something huge.
        if (bytes.length >= at + 8) {
          const view = new DataView(bytes.buffer);
          view.setUint32(at, Math.floor(random() * 2 ** 32), true);
          view.setUint32(at + 4, random() < 0.5 ? 0 : Math.floor(random() * 2 ** 32), true);
        }
      }
    }
  }
  return bytes;
}

/** Feeds `bytes` to a fresh reader in random pieces; returns the codes seen, if any. */
function run(bytes: Uint8Array, random: () => number): string | null {
  const reader = new FrameReader();
  try {
    for (let at = 0; at < bytes.length;) {
      const n = 1 + Math.floor(random() * 64);
      reader.push(bytes.slice(at, at + n));
      at += n;
      // Nothing beyond the limit plus one pushed piece is ever held.
      if (reader.bufferedBytes > MAX_FRAME_PAYLOAD + 4 + 64) throw new Error("Over-buffered");
      for (let p = reader.nextPayload(); p !== null; p = reader.nextPayload()) {
        const msg = decodeMessage(p);
        // Bincode is canonical: whatever decodes re-encodes to the same bytes.
        deepStrictEqual(encodeMessage(msg), p);
      }
    }
    reader.end();
    return null;
  } catch (error) {
    if (!(error instanceof WireError)) throw error;
    if (error.code === "oversized_frame") strictEqual(reader.bufferedBytes, 0);
    return error.code;
  }
}

Deno.test("fuzz: mutated and random frames raise only WireError, time-bounded", () => {
  const random = prng(0xc0ffee);
  const frames = loadVectors().map((v) => v.frame);
  const deadline = performance.now() + TIME_BUDGET_MS;
  const codes = new Map<string, number>();
  let cases = 0;
  while (cases < 20_000 && performance.now() < deadline) {
    let input: Uint8Array;
    const pick = random();
    if (pick < 0.8) {
      input = mutate(frames[Math.floor(random() * frames.length)]!, random);
    } else if (pick < 0.9) {
      input = Uint8Array.from(
        { length: Math.floor(random() * 64) },
        () => Math.floor(random() * 256),
      );
    } else {
      // A huge length header followed by a little data.
      input = new Uint8Array(4 + Math.floor(random() * 32));
      new DataView(input.buffer).setUint32(
        0,
        MAX_FRAME_PAYLOAD + 1 + Math.floor(random() * (2 ** 32 - MAX_FRAME_PAYLOAD - 1)),
        true,
      );
    }
    const code = run(input, random) ?? "ok";
    codes.set(code, (codes.get(code) ?? 0) + 1);
    cases++;
  }
  strictEqual(cases >= 1000, true, `only ${cases} cases ran`);
  for (const code of ["ok", "oversized_frame", "truncated_payload", "unknown_variant"]) {
    strictEqual((codes.get(code) ?? 0) > 0, true, `no case ended in '${code}'`);
  }
});
