import { CHUNKING_THRESHOLD } from "../cas/mod.ts";
import { type ContentRange, RANGE_MAX_BYTES, RANGE_MIN_BYTES } from "./content_range.ts";

/** A fetch a connection's end cut short: of a whole content, or of a range of one. */
export interface LostFetch {
  /** The content's hash. */
  hash: string;
  /** The bytes its answer was to carry. */
  bytes: number;
  /** The whole content's size, when known exactly (a whole fetch of a known size). */
  size?: number;
}

/** Contents fetched in ranges at most, the least recently used forgotten first. */
const PARTIALS_MAX = 4096;

interface Partial {
  size: number;
  /** Allocated with the first range received. */
  buffer: Uint8Array | null;
  /** The ranges received, sorted and apart: [start, end) pairs. */
  received: [number, number][];
}

/**
 * What a replica fetches in ranges, and what it holds of each, across its connections
 * (docs/PROTOCOL.md §4, "What a connection must carry"): a content whose whole fetch a
 * connection's end cut short, and that is larger than the range size, is fetched from
 * then on in ranges, each connection adding what it carried. The range size halves (to
 * half the largest answer a connection lost, {@linkcode RANGE_MIN_BYTES} at least) when a
 * connection ends with fetches in flight, and doubles with each range received (up to
 * {@linkcode RANGE_MAX_BYTES}), so a link that drops early still carries ranges, and a
 * good one soon carries large ones again.
 *
 * Held in memory only, within `maxBytes` (the least recently used partial content
 * dropped first); the bytes are checked against the hash only when complete, by the
 * fetcher, which forgets a content once it is stored or found corrupt.
 */
export class PartialContents {
  readonly #maxBytes: number;
  readonly #partials = new Map<string, Partial>();
  #heldBytes = 0;
  #rangeBytes = RANGE_MAX_BYTES;

  /** @param maxBytes The most bytes of partial contents held together. */
  constructor(maxBytes = 32 * 1024 * 1024) {
    this.#maxBytes = maxBytes;
  }

  /** The size of the ranges asked for now. */
  get rangeBytes(): number {
    return this.#rangeBytes;
  }

  /** The bytes of partial contents held now. */
  get heldBytes(): number {
    return this.#heldBytes;
  }

  /**
   * Learns from what a connection's end cut short: the range size drops to half the
   * largest answer lost, and each whole content lost that is larger than that is
   * fetched in ranges from now on.
   */
  lost(fetches: readonly LostFetch[]): void {
    if (fetches.length === 0) return;
    const largest = Math.max(...fetches.map((fetch) => fetch.bytes));
    this.#rangeBytes = clampRange(Math.min(this.#rangeBytes, Math.floor(largest / 2)));
    for (const { hash, size } of fetches) {
      if (size === undefined || size <= this.#rangeBytes || size >= CHUNKING_THRESHOLD) continue;
      if (!this.#partials.has(hash)) this.#partials.set(hash, { size, buffer: null, received: [] });
    }
    for (const oldest of this.#partials.keys()) {
      if (this.#partials.size <= PARTIALS_MAX) break;
      this.forget(oldest);
    }
  }

  /** The size of `hash`'s content, when it is fetched in ranges. */
  sizeOf(hash: string): number | undefined {
    return this.#partials.get(hash)?.size;
  }

  /**
   * The ranges of `hash` not received yet, each of at most the range size, in order.
   *
   * @returns Nothing when it is not fetched in ranges or is complete.
   */
  missing(hash: string): ContentRange[] {
    const partial = this.#partials.get(hash);
    if (!partial) return [];
    const ranges: ContentRange[] = [];
    let at = 0;
    const ends: [number, number] = [partial.size, partial.size];
    for (const [start, end] of [...partial.received, ends]) {
      for (; at < start; at += this.#rangeBytes) {
        ranges.push({ hash, offset: at, length: Math.min(this.#rangeBytes, start - at) });
      }
      at = end;
    }
    return ranges;
  }

  /**
   * Keeps a range received for `hash` (ignored when it is not fetched in ranges, or the
   * bytes no longer fit). The range size doubles.
   *
   * @throws {RangeError} When the bytes run past the content's size.
   */
  received(hash: string, offset: number, bytes: Uint8Array): void {
    const partial = this.#partials.get(hash);
    if (!partial) return;
    if (offset + bytes.length > partial.size) {
      throw new RangeError(
        `a range of ${bytes.length} bytes at ${offset} runs past the content's ${partial.size}`,
      );
    }
    this.#rangeBytes = clampRange(this.#rangeBytes * 2);
    this.#partials.delete(hash); // moved to the end: the most recently used
    this.#partials.set(hash, partial);
    if (partial.buffer === null) {
      if (!this.#makeRoom(partial.size)) {
        this.#partials.delete(hash);
        return;
      }
      partial.buffer = new Uint8Array(partial.size);
      this.#heldBytes += partial.size;
    }
    partial.buffer.set(bytes, offset);
    partial.received = merged(partial.received, [offset, offset + bytes.length]);
  }

  /** The whole content of `hash`, once every range is received (not checked yet). */
  complete(hash: string): Uint8Array | null {
    const partial = this.#partials.get(hash);
    if (!partial?.buffer) return null;
    const [first] = partial.received;
    return partial.received.length === 1 && first![0] === 0 && first![1] === partial.size
      ? partial.buffer
      : null;
  }

  /** Stops fetching `hash` in ranges, and drops what was received of it. */
  forget(hash: string): void {
    const partial = this.#partials.get(hash);
    if (!partial) return;
    this.#partials.delete(hash);
    if (partial.buffer) this.#heldBytes -= partial.size;
  }

  /** Drops the least recently used partial contents until `bytes` more fit, if they can. */
  #makeRoom(bytes: number): boolean {
    if (bytes > this.#maxBytes) return false;
    for (const [hash, partial] of this.#partials) {
      if (this.#heldBytes + bytes <= this.#maxBytes) break;
      if (partial.buffer) this.forget(hash);
    }
    return true;
  }
}

function clampRange(bytes: number): number {
  return Math.max(RANGE_MIN_BYTES, Math.min(RANGE_MAX_BYTES, bytes));
}

/** `ranges` (sorted, apart) with `added` merged in. */
function merged(ranges: [number, number][], added: [number, number]): [number, number][] {
  const out: [number, number][] = [];
  let [start, end] = added;
  for (const [s, e] of ranges) {
    if (e < start) out.push([s, e]);
    else if (s > end) {
      out.push([start, end]);
      [start, end] = [s, e];
    } else [start, end] = [Math.min(s, start), Math.max(e, end)];
  }
  out.push([start, end]);
  return out;
}
