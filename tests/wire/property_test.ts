/**
 * Property tests of the codec: long seeded sequences of random messages (every variant,
 * random Unicode strings, sizes around every buffer boundary of the writer and the frame
 * reader), each encoded, then all decoded back, by our decoder and by an independent
 * reference decoder checked against the Rust vectors. A failure names its seed and index;
 * `CHRONICLE_WIRE_SEED` repeats one seed.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  decodeMessage,
  encodeFrame,
  encodeMessage,
  FrameReader,
  I64_MAX,
  I64_MIN,
  toJson,
  U64_MAX,
  type WireMessage,
  type WriteBackEntry,
  type WriteOperation,
} from "../../lib/wire/mod.ts";
import { Prng } from "../_helpers/prng.ts";
import { referenceDecodeFrame } from "./_reference_decoder.ts";
import { loadVectors, readVector } from "./_vectors.ts";

/**
 * Sizes where the encoder or the reader changes course: the ASCII fast path of short
 * strings (64 code units), the slack kept past a hint (200), the shared slab's small
 * messages (4 KiB) and the slab itself (64 KiB), the reader's 64 KiB reads, and 1 MiB.
 */
const BOUNDARIES = [0, 64, 200, 4096, 65_536, 1_048_576];

/** Random sizes: mostly near a boundary (both sides), sometimes anywhere below 5,000. */
function size(random: Prng, bigOdds = 0.02): number {
  const roll = random.next();
  if (roll < 0.4) return random.int(5000);
  const pool = random.next() < bigOdds ? BOUNDARIES : BOUNDARIES.slice(0, 4);
  const boundary = pool[random.int(pool.length)]!;
  const spread = random.next() < 0.5 ? 4 : 300;
  return Math.max(0, boundary - spread + random.int(2 * spread + 1));
}

/** One code point from a class of UTF-8 width 1 to 4 (controls, quotes and emoji included). */
function codePoint(random: Prng, width: number): number {
  switch (width) {
    case 1:
      return random.next() < 0.1
        ? [0, 9, 10, 31, 34, 92, 127][random.int(7)]!
        : 32 + random.int(95);
    case 2:
      return 0x80 + random.int(0x800 - 0x80);
    case 3: {
      const c = 0x800 + random.int(0x10000 - 0x800 - 0x800);
      return c >= 0xd800 ? c + 0x800 : c; // never a lone surrogate
    }
    default:
      return 0x10000 + random.int(0x110000 - 0x10000);
  }
}

/**
 * A random valid Unicode string of about `units` UTF-16 code units: all ASCII, ASCII with
 * one wider character (first, last or anywhere), all one width, or mixed.
 */
function text(random: Prng, units = size(random)): string {
  const profile = random.int(6);
  const out: string[] = [];
  let n = 0;
  while (n < units) {
    let width: number;
    if (profile === 0) width = 1;
    else if (profile === 1) width = 1 + random.int(4);
    else if (profile === 2) width = random.next() < 0.95 ? 1 : 2 + random.int(3);
    else width = profile - 1; // 2, 3 or 4 bytes each
    const s = String.fromCodePoint(codePoint(random, width));
    out.push(s);
    n += s.length;
  }
  if (profile === 0 && units > 0 && random.next() < 0.5) {
    const wide = String.fromCodePoint(codePoint(random, 2 + random.int(3)));
    out[random.next() < 0.5 ? 0 : out.length - 1] = wide;
  }
  return out.join("");
}

const U64_EDGES = [0n, 1n, 0xffn, 0xffff_ffffn, 0x1_0000_0000n, 2n ** 53n + 1n, U64_MAX - 1n];
const I64_EDGES = [0n, -1n, 1n, I64_MIN, I64_MAX, -(2n ** 32n), 0o100644n, 0o40755n];

function u64(random: Prng): bigint {
  if (random.next() < 0.3) return U64_EDGES[random.int(U64_EDGES.length)]! + BigInt(random.int(2));
  return BigInt(random.int(2 ** 31)) << BigInt(random.int(33));
}

function i64(random: Prng): bigint {
  if (random.next() < 0.3) return I64_EDGES[random.int(I64_EDGES.length)]!;
  return BigInt.asIntN(64, u64(random));
}

function bytes(random: Prng, bigOdds = 0.02): Uint8Array {
  return random.bytes(size(random, bigOdds));
}

function maybe<T>(random: Prng, make: () => T): T | null {
  return random.next() < 0.3 ? null : make();
}

function operation(random: Prng): WriteOperation {
  const kind = random.int(4);
  if (kind === 0) return { type: "Write" };
  if (kind === 1) return { type: "Delete" };
  if (kind === 2) return { type: "Rename", new_path: text(random) };
  return { type: "Chmod" };
}

function entry(random: Prng): WriteBackEntry {
  return {
    local_seq: u64(random),
    filepath: text(random),
    operation: operation(random),
    content_hash: maybe(random, () => text(random, random.int(80))),
    content_bytes: maybe(random, () => bytes(random, 0)),
    size: i64(random),
    permissions: i64(random),
    is_deletion: random.next() < 0.5,
    master_rowid_seen: i64(random),
  };
}

/** A random message of any variant; small ones are likelier, as on a real connection. */
function message(random: Prng): WireMessage {
  switch (random.int(14)) {
    case 0:
    case 1:
    case 2:
      return {
        type: "Notification",
        sequence: u64(random),
        filepath: text(random),
        content_hash: text(random, random.next() < 0.8 ? 64 : size(random)),
        size: u64(random),
        permissions: i64(random),
        is_deletion: random.next() < 0.5,
        inline_content: maybe(random, () => bytes(random)),
      };
    case 3:
      return { type: "Heartbeat", agent_sequence: u64(random), agent_iteration: i64(random) };
    case 4:
      return {
        type: "WriteBack",
        sandbox_id: text(random, random.int(100)),
        entries: Array.from({ length: random.int(6) }, () => entry(random)),
      };
    case 5:
      return {
        type: "WriteBackResult",
        accepted: Array.from({ length: random.int(20) }, () => [u64(random), i64(random)]),
        rejected: Array.from({ length: random.int(5) }, () => [u64(random), text(random)]),
      };
    case 6:
      return { type: "BarrierRequest", sequence: u64(random) };
    case 7:
      return {
        type: "BarrierConfirmation",
        satisfied: random.next() < 0.5,
        current_sequence: u64(random),
      };
    case 8:
      return { type: "Ack", up_to_sequence: u64(random) };
    case 9:
      return { type: "ContentFetchRequest", content_hash: text(random) };
    case 10:
      return {
        type: "ContentFetchResponse",
        content_hash: text(random),
        content: bytes(random, 0.1),
        size: u64(random),
        chunk_manifest: maybe(random, () => text(random)),
      };
    case 11:
      return { type: "ContentNotFound", content_hash: text(random) };
    case 12:
      return { type: "CatchupRequest", sandbox_id: text(random), since_sequence: u64(random) };
    default:
      return { type: "FullResyncRequired", reason: text(random), current_sequence: u64(random) };
  }
}

const SEEDS = Deno.env.get("CHRONICLE_WIRE_SEED")
  ? [Number(Deno.env.get("CHRONICLE_WIRE_SEED"))]
  : [1, 20261124, 0xc0ffee, 987_654_321];
const MESSAGES_PER_SEED = 1500;

Deno.test("the reference decoder gives each Rust vector's JSON text exactly", async (t) => {
  for (const v of loadVectors()) {
    await t.step(v.name, () => strictEqual(referenceDecodeFrame(v.frame) + "\n", v.json));
  }
  // The same for the stream of every vector, split at each header.
  const stream = readVector("all.frames");
  const lines = new TextDecoder().decode(readVector("all.jsonl")).trimEnd().split("\n");
  const got: string[] = [];
  for (let at = 0; at < stream.length;) {
    const end = at + 4 + new DataView(stream.buffer, stream.byteOffset + at).getUint32(0, true);
    got.push(referenceDecodeFrame(stream.subarray(at, end)));
    at = end;
  }
  deepStrictEqual(got, lines);
});

for (const seed of SEEDS) {
  Deno.test(`random message sequences round-trip through every decoder (seed ${seed})`, () => {
    const random = new Prng(seed);
    const msgs = Array.from({ length: MESSAGES_PER_SEED }, () => message(random));
    // Everything is encoded before anything is decoded: a frame sharing the slab must
    // stay intact while later messages are written after it.
    const frames = msgs.map((msg) => encodeFrame(msg));
    const payloads = msgs.map((msg) => encodeMessage(msg));
    for (let i = 0; i < msgs.length; i++) {
      const where = `seed ${seed}, message ${i} (${msgs[i]!.type})`;
      const frame = frames[i]!;
      deepStrictEqual(frame.subarray(4), payloads[i], `${where}: frame and payload differ`);
      deepStrictEqual(decodeMessage(frame.subarray(4)), msgs[i], where);
      strictEqual(referenceDecodeFrame(frame), toJson(msgs[i]!), where);
    }
    // The whole sequence as one stream, cut into random pieces as a socket delivers it.
    const reader = new FrameReader();
    const total = frames.reduce((n, f) => n + f.length, 0);
    const stream = new Uint8Array(total);
    let at = 0;
    for (const frame of frames) {
      stream.set(frame, at);
      at += frame.length;
    }
    const read: WireMessage[] = [];
    for (let from = 0; from < total;) {
      const to = Math.min(total, from + 1 + size(random, 0.05));
      reader.push(stream.slice(from, to));
      for (let msg = reader.nextMessage(); msg !== null; msg = reader.nextMessage()) {
        read.push(msg);
      }
      from = to;
    }
    strictEqual(read.length, msgs.length, `seed ${seed}: frames read from the stream`);
    for (let i = 0; i < msgs.length; i++) deepStrictEqual(read[i], msgs[i], `seed ${seed}, ${i}`);
  });
}
