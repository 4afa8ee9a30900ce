// Internal: a growable little-endian byte buffer for the bincode encoder.
import { I64_MAX, I64_MIN, U64_MAX } from "./types.ts";

const encoder = new TextEncoder();

/** Longest string written by the plain ASCII loop instead of `encodeInto`. */
const SHORT_STRING = 64;

/** Messages whose size hint is at most this are written into a shared slab. */
const SMALL = 4096;
/** Size of one slab. */
const SLAB = 64 * 1024;

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
      if (SLAB - slabUsed < capacity) {
        slab = new Uint8Array(SLAB);
        slabView = new DataView(slab.buffer);
        slabUsed = 0;
      }
      this.#buf = slab;
      this.#view = slabView;
      this.#base = slabUsed;
      this.#inSlab = true;
    } else {
      this.#buf = new Uint8Array(Math.max(capacity, start));
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

  #ensure(n: number): void {
    if (this.#pos + n > this.#buf.length) this.#grow(n);
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
    this.#ensure(4);
    this.#view.setUint32(this.#pos, value, true);
    this.#pos += 4;
  }

  /** Writes a u64 after checking its type and range. */
  u64(value: bigint, field: string): void {
    if (typeof value !== "bigint") throw notA("bigint", field, value);
    if (value < 0n || value > U64_MAX) {
      throw new RangeError(`Field '${field}' is '${value}', outside the u64 range 0..${U64_MAX}`);
    }
    this.#ensure(8);
    this.#view.setBigUint64(this.#pos, value, true);
    this.#pos += 8;
  }

  /** Writes an i64 after checking its type and range. */
  i64(value: bigint, field: string): void {
    if (typeof value !== "bigint") throw notA("bigint", field, value);
    if (value < I64_MIN || value > I64_MAX) {
      throw new RangeError(
        `Field '${field}' is '${value}', outside the i64 range ${I64_MIN}..${I64_MAX}`,
      );
    }
    this.#ensure(8);
    this.#view.setBigInt64(this.#pos, value, true);
    this.#pos += 8;
  }

  /** Writes a length as a u64. */
  #len(n: number): void {
    this.#view.setUint32(this.#pos, n >>> 0, true);
    this.#view.setUint32(this.#pos + 4, Math.floor(n / 0x1_0000_0000), true);
    this.#pos += 8;
  }

  /** Writes a bool as one byte. */
  bool(value: boolean, field: string): void {
    if (typeof value !== "boolean") throw notA("boolean", field, value);
    this.#ensure(1);
    this.#buf[this.#pos++] = value ? 1 : 0;
  }

  /** Writes an Option tag: 0 for null, else 1. */
  tag(present: boolean): void {
    this.#ensure(1);
    this.#buf[this.#pos++] = present ? 1 : 0;
  }

  /** Writes a u64 element count (for `Vec<T>`), checking the value is an array. */
  count(value: readonly unknown[], field: string): void {
    if (!Array.isArray(value)) throw notA("array", field, value);
    this.#ensure(8);
    this.#len(value.length);
  }

  /** Writes `Vec<u8>`: u64 length then the bytes. */
  byteVec(value: Uint8Array, field: string): void {
    if (!(value instanceof Uint8Array)) throw notA("Uint8Array", field, value);
    const n = value.length;
    this.#ensure(8 + n);
    this.#len(n);
    this.#buf.set(value, this.#pos);
    this.#pos += n;
  }

  /** Writes a `String`: u64 UTF-8 length then the UTF-8 bytes. */
  string(value: string, field: string): void {
    if (typeof value !== "string") throw notA("string", field, value);
    const n = value.length;
    this.#ensure(8 + n);
    const lenAt = this.#pos;
    const start = lenAt + 8;
    if (n <= SHORT_STRING) {
      const buf = this.#buf;
      let i = 0;
      for (; i < n; i++) {
        const c = value.charCodeAt(i);
        if (c >= 0x80) break;
        buf[start + i] = c;
      }
      if (i === n) {
        this.#view.setUint32(lenAt, n, true);
        this.#view.setUint32(lenAt + 4, 0, true);
        this.#pos = start + n;
        return;
      }
    }
    // At most 3 UTF-8 bytes per UTF-16 code unit; lone surrogates become U+FFFD, as a
    // Rust `String` cannot hold them. Making room may move the message to a buffer of
    // its own, so every offset is taken again after it (`#pos` is still the length's).
    this.#ensure(8 + n * 3);
    const bytesAt = this.#pos + 8;
    const { written } = encoder.encodeInto(value, this.#buf.subarray(bytesAt));
    this.#len(written);
    this.#pos = bytesAt + written;
  }
}

function notA(kind: string, field: string, value: unknown): TypeError {
  const got = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
  return new TypeError(`Field '${field}' must be a ${kind}, got '${got}'`);
}
