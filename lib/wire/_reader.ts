// Internal: a strict little-endian cursor over one bincode payload.
import { WireError } from "./wire_error.ts";

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Longest string decoded by the plain ASCII loop instead of `TextDecoder`. */
const SHORT_STRING = 64;
/** Scratch for the character codes of one short ASCII string (decoding is synchronous). */
const ASCII_CODES: number[] = [];

/**
 * One DataView per underlying buffer: frames cut from one received chunk, or encoded
 * into one slab, share it instead of paying for a DataView each.
 */
const views = new WeakMap<ArrayBufferLike, DataView>();

function viewOf(bytes: Uint8Array): DataView {
  let view = views.get(bytes.buffer);
  if (view === undefined) {
    view = new DataView(bytes.buffer);
    views.set(bytes.buffer, view);
  }
  return view;
}

/** Reads bincode values in order; every read names its field for errors. */
export class Reader {
  #bytes: Uint8Array;
  #view: DataView;
  #pos = 0;
  #end: number;
  /** Offset of `#bytes` within `#view`. */
  #base: number;

  /** @param bytes The payload; byte vectors read from it are views that alias it. */
  constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
    this.#view = viewOf(bytes);
    this.#base = bytes.byteOffset;
    this.#end = bytes.length;
  }

  /** Offset of the next byte to read. */
  get position(): number {
    return this.#pos;
  }

  /** Bytes not yet read. */
  get remaining(): number {
    return this.#end - this.#pos;
  }

  #need(n: number, field: string): void {
    if (this.#end - this.#pos < n) {
      throw new WireError(
        "unexpected_end",
        `Field '${field}' at byte ${this.#pos} needs '${n}' bytes but only '${
          this.#end - this.#pos
        }' remain in the payload`,
      );
    }
  }

  /** Reads a u32 variant index and checks it is below `count`. */
  variant(count: number, field: string): number {
    this.#need(4, field);
    const at = this.#pos;
    const index = this.#view.getUint32(this.#base + at, true);
    this.#pos += 4;
    if (index >= count) {
      throw new WireError(
        "unknown_variant",
        `Unknown ${field} variant index '${index}' at byte ${at} (expected 0 to ${count - 1})`,
      );
    }
    return index;
  }

  /** Reads a u64. */
  u64(field: string): bigint {
    this.#need(8, field);
    const value = this.#view.getBigUint64(this.#base + this.#pos, true);
    this.#pos += 8;
    return value;
  }

  /** Reads an i64. */
  i64(field: string): bigint {
    this.#need(8, field);
    const value = this.#view.getBigInt64(this.#base + this.#pos, true);
    this.#pos += 8;
    return value;
  }

  /** Reads a bool byte, which must be 0 or 1. */
  bool(field: string): boolean {
    this.#need(1, field);
    const b = this.#bytes[this.#pos]!;
    if (b > 1) {
      throw new WireError(
        "invalid_bool",
        `Invalid bool byte '${b}' for '${field}' at byte ${this.#pos} (expected 0 or 1)`,
      );
    }
    this.#pos++;
    return b === 1;
  }

  /** Reads an Option tag, which must be 0 (None) or 1 (Some). */
  option(field: string): boolean {
    this.#need(1, field);
    const b = this.#bytes[this.#pos]!;
    if (b > 1) {
      throw new WireError(
        "invalid_option",
        `Invalid Option tag '${b}' for '${field}' at byte ${this.#pos} (expected 0 or 1)`,
      );
    }
    this.#pos++;
    return b === 1;
  }

  /**
   * Reads a u64 length or element count; `unit` is the fewest bytes one element takes,
   * so that a count no payload could hold is refused before any element is read.
   */
  length(field: string, unit: number): number {
    this.#need(8, field);
    const at = this.#pos;
    const lo = this.#view.getUint32(this.#base + at, true);
    const hi = this.#view.getUint32(this.#base + at + 4, true);
    this.#pos += 8;
    const left = this.#end - this.#pos;
    // hi > 0 means at least 4 GiB, more than any payload.
    if (hi !== 0 || lo * unit > left) {
      throw new WireError(
        "length_past_end",
        `Length '${
          this.#view.getBigUint64(this.#base + at, true)
        }' of '${field}' at byte ${at} runs past the end of the payload ('${left}' bytes left)`,
      );
    }
    return lo;
  }

  /** Reads `Vec<u8>` as a view that aliases the payload. */
  byteVec(field: string): Uint8Array {
    const n = this.length(field, 1);
    const start = this.#pos;
    this.#pos += n;
    return this.#bytes.subarray(start, start + n);
  }

  /** Reads a `String`, which must be valid UTF-8. */
  string(field: string): string {
    const n = this.length(field, 1);
    const bytes = this.#bytes;
    const start = this.#pos;
    const end = start + n;
    if (n <= SHORT_STRING) {
      // One call makes one flat string. Appending a character at a time would make a
      // chain of up to 64 cons strings (about 2 KiB for a 64-character hash), which a
      // replica keeps for every queued notification's path and hash.
      const codes = ASCII_CODES;
      codes.length = n;
      let i = start;
      for (; i < end; i++) {
        const c = bytes[i]!;
        if (c >= 0x80) break;
        codes[i - start] = c;
      }
      if (i === end) {
        this.#pos = end;
        return String.fromCharCode.apply(null, codes);
      }
    }
    let s: string;
    try {
      s = utf8.decode(bytes.subarray(start, end));
    } catch (cause) {
      throw new WireError("invalid_utf8", `Invalid UTF-8 in '${field}' at byte ${start}`, {
        cause,
      });
    }
    this.#pos = end;
    return s;
  }
}
