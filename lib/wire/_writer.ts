// Internal: a growable little-endian byte buffer for the bincode encoder.
import { I64_MAX, I64_MIN, U64_MAX } from "./types.ts";

const encoder = new TextEncoder();

/** Longest string written by the plain ASCII loop instead of `encodeInto`. */
const SHORT_STRING = 64;

/** Messages whose size hint is at most this are written into a shared slab. */
const SMALL = 4096;
/** Size of one slab. */
const SLAB = 64 * 1024;
/**
 * Room kept past a message's size hint: a short string reserves its worst case (three
 * bytes per code unit) before it knows it is ASCII, and an exact hint must not make
 * every such message grow.
 */
const SLACK = 8 + SHORT_STRING * 3;

let slab = new Uint8Array(SLAB);
let slabView = new DataView(slab.buffer);
let slabUsed = 0;

/**
 * A growable buffer written front to back; `bytes()` views what was written.
 *
 * Small messages are written straight into a shared slab (one allocation serves many
 * messages, as Node's Buffer pool does), so their bytes are views on a buffer shared
 * with other messages. Larger ones, and small ones that outgrow their hint, get a
 * buffer of their own that grows by doubling.
 */
export class Writer {
  #buf: Uint8Array;
  #view: DataView;
  /** Index in `#buf` of the first byte of this message. */
  #base: number;
  /** Index in `#buf` of the next byte to write. */
  #pos: number;
  #inSlab: boolean;

  /**
   * @param capacity Expected size in bytes (a good guess avoids growing).
   * @param start Bytes to leave at the front (room for a frame header).
   */
  constructor(capacity: number, start = 0) {
    if (capacity <= SMALL) {
      if (SLAB - slabUsed < capacity + SLACK) {
        slab = new Uint8Array(SLAB);
        slabView = new DataView(slab.buffer);
        slabUsed = 0;
      }
      this.#buf = slab;
      this.#view = slabView;
      this.#base = slabUsed;
      this.#inSlab = true;
    } else {
      this.#buf = new Uint8Array(Math.max(capacity, start) + SLACK);
      this.#view = new DataView(this.#buf.buffer);
      this.#base = 0;
      this.#inSlab = false;
    }
    this.#pos = this.#base + start;
  }

  /** Bytes written so far, counted from the start of this message. */
  get position(): number {
    return this.#pos - this.#base;
  }

  /** Finishes: a view of everything written, aliasing the buffer. */
  bytes(): Uint8Array {
    if (this.#inSlab) {
      // Round up so that the next message starts 8-byte aligned.
      slabUsed = Math.min(SLAB, (this.#pos + 7) & ~7);
    }
    if (this.#base === 0 && this.#buf.length === this.#pos) return this.#buf;
    return this.#buf.subarray(this.#base, this.#pos);
  }

  /** Overwrites a u32 at an earlier position, counted from the start of this message. */
  patchU32(at: number, value: number): void {
    this.#view.setUint32(this.#base + at, value, true);
  }

  /**
   * Makes room for `n` more bytes and returns the index in `#buf` where they go.
   *
   * Making room can move the message to a buffer of its own, so an index into `#buf`
   * is only valid until the next call: every write method calls this once, first, and
   * takes all its indexes from the answer (never from a `#pos` read before it).
   */
  #reserve(n: number): number {
    if (this.#pos + n > this.#buf.length) this.#grow(n);
    return this.#pos;
  }

  #grow(n: number): void {
    const used = this.#pos - this.#base;
    const capacity = Math.max((this.#buf.length - this.#base) * 2, used + n, 64);
    const next = new Uint8Array(capacity);
    next.set(this.#buf.subarray(this.#base, this.#pos));
    this.#buf = next;
    this.#view = new DataView(next.buffer);
    this.#base = 0;
    this.#pos = used;
    this.#inSlab = false;
  }

  /** Writes a u32 (used for variant indexes). */
  u32(value: number): void {
    const at = this.#reserve(4);
    this.#view.setUint32(at, value, true);
    this.#pos = at + 4;
  }

  /** Writes a u64 after checking its type and range. */
  u64(value: bigint, field: string): void {
    if (typeof value !== "bigint") throw notA("bigint", field, value);
    if (value < 0n || value > U64_MAX) {
      throw new RangeError(`Field '${field}' is '${value}', outside the u64 range 0..${U64_MAX}`);
    }
    const at = this.#reserve(8);
    this.#view.setBigUint64(at, value, true);
    this.#pos = at + 8;
  }

  /** Writes an i64 after checking its type and range. */
  i64(value: bigint, field: string): void {
    if (typeof value !== "bigint") throw notA("bigint", field, value);
    if (value < I64_MIN || value > I64_MAX) {
      throw new RangeError(
        `Field '${field}' is '${value}', outside the i64 range ${I64_MIN}..${I64_MAX}`,
      );
    }
    const at = this.#reserve(8);
    this.#view.setBigInt64(at, value, true);
    this.#pos = at + 8;
  }

  /** Writes a length as a u64 at `at`, an index just returned by `#reserve`. */
  #len(at: number, n: number): void {
    this.#view.setUint32(at, n >>> 0, true);
    this.#view.setUint32(at + 4, Math.floor(n / 0x1_0000_0000), true);
  }

  /** Writes a bool as one byte. */
  bool(value: boolean, field: string): void {
    if (typeof value !== "boolean") throw notA("boolean", field, value);
    const at = this.#reserve(1);
    this.#buf[at] = value ? 1 : 0;
    this.#pos = at + 1;
  }

  /** Writes an Option tag: 0 for null, else 1. */
  tag(present: boolean): void {
    const at = this.#reserve(1);
    this.#buf[at] = present ? 1 : 0;
    this.#pos = at + 1;
  }

  /** Writes a u64 element count (for `Vec<T>`), checking the value is an array. */
  count(value: readonly unknown[], field: string): void {
    if (!Array.isArray(value)) throw notA("array", field, value);
    const at = this.#reserve(8);
    this.#len(at, value.length);
    this.#pos = at + 8;
  }

  /** Writes `Vec<u8>`: u64 length then the bytes. */
  byteVec(value: Uint8Array, field: string): void {
    if (!(value instanceof Uint8Array)) throw notA("Uint8Array", field, value);
    const n = value.length;
    const at = this.#reserve(8 + n);
    this.#len(at, n);
    this.#buf.set(value, at + 8);
    this.#pos = at + 8 + n;
  }

  /** Writes a `String`: u64 UTF-8 length then the UTF-8 bytes. */
  string(value: string, field: string): void {
    if (typeof value !== "string") throw notA("string", field, value);
    const n = value.length;
    // Room for the worst case at once (at most 3 UTF-8 bytes per UTF-16 code unit), so
    // that both the ASCII loop and `encodeInto` write at indexes taken after the only
    // `#reserve`: nothing can move the message between them.
    const at = this.#reserve(8 + n * 3);
    const start = at + 8;
    const buf = this.#buf;
    if (n <= SHORT_STRING) {
      let i = 0;
      for (; i < n; i++) {
        const c = value.charCodeAt(i);
        if (c >= 0x80) break;
        buf[start + i] = c;
      }
      if (i === n) {
        this.#len(at, n);
        this.#pos = start + n;
        return;
      }
    }
    // Lone surrogates become U+FFFD, as a Rust `String` cannot hold them.
    const { written } = encoder.encodeInto(value, buf.subarray(start, start + n * 3));
    this.#len(at, written);
    this.#pos = start + written;
  }
}

function notA(kind: string, field: string, value: unknown): TypeError {
  const got = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
  return new TypeError(`Field '${field}' must be a ${kind}, got '${got}'`);
}
