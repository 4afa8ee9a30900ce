import { CHUNK_MAX_SIZE } from "../cas/mod.ts";
import { type ContentRange, RANGE_MAX_BYTES, RANGE_MIN_BYTES } from "./content_range.ts";

/** A fetch a connection's end cut short: of a whole content, or of a range of one. */
export interface LostFetch {
  /** The content's hash. */
  hash: string;
  /** The bytes its answer was to carry. */
  bytes: number;
  /** The whole content's size, when known exactly (a whole fetch of a known size). */
  size?: number;
  /** Whether it asked for a range. */
  range?: boolean;
}

/** Contents fetched in ranges at most, the least recently used forgotten first. */
const PARTIALS_MAX = 4096;
/**
 * The range size doubles once a connection has carried this many ranges' worth of range
 * bytes: it grows on a link that shows it carries more, not merely with each range.
 */
const GROWTH_RANGES = 4;

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
 * then on in ranges, each connection adding what it carried.
 *
 * The range size follows the link: at a connection's end with fetches lost it drops to
 * at most half the largest answer lost, and to half itself when a range was lost
 * ({@linkcode RANGE_MIN_BYTES} at least); it doubles each time one connection has carried
 * {@linkcode GROWTH_RANGES} ranges' worth (up to {@linkcode RANGE_MAX_BYTES}).
 *
 * Held in memory only, within `maxBytes`: the least recently used partial content that no
 * fetch is filling is dropped first (the fetcher keeps those it fills within `maxBytes`).
 * The bytes are checked against the hash only when complete, by the fetcher, which takes
 * the whole out ({@linkcode PartialContents.take}).
 */
export class PartialContents {
  /** The most bytes of partial contents held together. */
  readonly maxBytes: number;
  readonly #partials = new Map<string, Partial>();
  /** Contents a fetch is filling now: never dropped for room. */
  readonly #filling = new Set<string>();
  #heldBytes = 0;
  #rangeBytes = RANGE_MAX_BYTES;
  /** Range bytes the current connection carried since the range size last changed. */
  #carried = 0;

  /** @param maxBytes The most bytes of partial contents held together. */
  constructor(maxBytes = 32 * 1024 * 1024) {
    this.maxBytes = maxBytes;
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
   * Learns from a connection's end, with what it cut short (nothing when it ended with no
   * fetch in flight): the range size drops (see the class), and each whole content lost
   * that is larger than the new size is fetched in ranges from now on.
   */
  connectionEnded(lost: readonly LostFetch[]): void {
    this.#carried = 0;
    if (lost.length === 0) return;
    const largest = Math.max(...lost.map((fetch) => fetch.bytes));
    const shrunk = lost.some((fetch) => fetch.range) ? this.#rangeBytes / 2 : this.#rangeBytes;
    this.#rangeBytes = clampRange(Math.floor(Math.min(shrunk, largest / 2)));
    for (const { hash, size } of lost) {
      if (size === undefined || size <= this.#rangeBytes || size > CHUNK_MAX_SIZE) continue;
      if (!this.#partials.has(hash)) this.#partials.set(hash, { size, buffer: null, received: [] });
    }
    for (const oldest of this.#partials.keys()) {
      if (this.#partials.size <= PARTIALS_MAX) break;
      if (!this.#filling.has(oldest)) this.forget(oldest);
    }
  }

  /** The size of `hash`'s content, when it is fetched in ranges. */
  sizeOf(hash: string): number | undefined {
    return this.#partials.get(hash)?.size;
  }

  /** Marks `hash` as being filled by a fetch (or no longer): it is not dropped for room. */
  filling(hash: string, now: boolean): void {
    if (now) this.#filling.add(hash);
    else this.#filling.delete(hash);
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
   * bytes no longer fit), and counts it in what this connection carried.
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
    this.#carried += bytes.length;
    if (this.#carried >= GROWTH_RANGES * this.#rangeBytes) {
      this.#rangeBytes = clampRange(this.#rangeBytes * 2);
      this.#carried = 0;
    }
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

  /**
   * Takes the whole content of `hash` out, once every range is received (not checked
   * yet): it is no longer fetched in ranges, and nothing writes into it again.
   */
  take(hash: string): Uint8Array | null {
    const partial = this.#partials.get(hash);
    if (!partial?.buffer) return null;
    const [first] = partial.received;
    if (partial.received.length !== 1 || first![0] !== 0 || first![1] !== partial.size) return null;
    this.forget(hash);
    return partial.buffer;
  }

  /** Stops fetching `hash` in ranges, and drops what was received of it. */
  forget(hash: string): void {
    const partial = this.#partials.get(hash);
    if (!partial) return;
    this.#partials.delete(hash);
    if (partial.buffer) this.#heldBytes -= partial.size;
  }

  /**
   * Drops the least recently used partial contents no fetch is filling until `bytes`
   * more fit, if they can.
   */
  #makeRoom(bytes: number): boolean {
    for (const [hash, partial] of this.#partials) {
      if (this.#heldBytes + bytes <= this.maxBytes) break;
      if (partial.buffer && !this.#filling.has(hash)) this.forget(hash);
    }
    return this.#heldBytes + bytes <= this.maxBytes;
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
