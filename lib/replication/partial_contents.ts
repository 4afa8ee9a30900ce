import { CHUNK_MAX_SIZE } from "../cas/mod.ts";
import type { ContentRange } from "./content_range.ts";
import { LinkSize } from "./link_size.ts";

/** A fetch a connection's end cut short: of a whole content, or of a range of one. */
export interface LostFetch {
  /** The content's hash. */
  hash: string;
  /** The bytes its answer was to carry. */
  bytes: number;
  /** The whole content's size, when known (a whole fetch of a known size). */
  size?: number;
  /**
   * Whether it asked for a range. Otherwise it asked for a whole content or chunk, of
   * `size` when known: `bytes` is then that size, or an estimate.
   */
  range?: boolean;
}

/** Contents fetched in ranges at most, the least recently used forgotten first. */
const PARTIALS_MAX = 4096;

interface Partial {
  /** Unknown until the first range's answer gives it (a fetch of unknown size was lost). */
  size: number | null;
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
 * A content whose size the lost fetch did not know (a release of a version held back, whose
 * notification is long gone) learns it from its first range's answer.
 *
 * The range size follows the link (see `LinkSize`): at a connection's end with fetches
 * lost it drops to at most half the largest answer of a known size lost, and to half itself
 * when a range was lost; it doubles each time one connection has carried four ranges'
 * worth.
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
  readonly #rangeSize = new LinkSize();

  /** @param maxBytes The most bytes of partial contents held together. */
  constructor(maxBytes = 32 * 1024 * 1024) {
    this.maxBytes = maxBytes;
  }

  /** The size of the ranges asked for now. */
  get rangeBytes(): number {
    return this.#rangeSize.bytes;
  }

  /** The bytes of partial contents held now. */
  get heldBytes(): number {
    return this.#heldBytes;
  }

  /**
   * Learns from a connection's end, with what it cut short (nothing when it ended with no
   * fetch in flight): the range size drops (see the class), and each whole content lost
   * that is larger than the new size, or of a size not known, is fetched in ranges from
   * now on.
   */
  connectionEnded(lost: readonly LostFetch[]): void {
    const known = lost.filter((fetch) => fetch.range || fetch.size !== undefined);
    this.#rangeSize.connectionEnded(
      known.length > 0 ? Math.max(...known.map((fetch) => fetch.bytes)) : null,
      lost.some((fetch) => fetch.range),
    );
    for (const { hash, size, range } of lost) {
      if (range || this.#partials.has(hash)) continue;
      if (size !== undefined && (size <= this.rangeBytes || size > CHUNK_MAX_SIZE)) continue;
      this.#partials.set(hash, { size: size ?? null, buffer: null, received: [] });
    }
    for (const oldest of this.#partials.keys()) {
      if (this.#partials.size <= PARTIALS_MAX) break;
      if (!this.#filling.has(oldest)) this.forget(oldest);
    }
  }

  /** The size of `hash`'s content when it is fetched in ranges: `null` while unknown. */
  sizeOf(hash: string): number | null | undefined {
    return this.#partials.get(hash)?.size;
  }

  /** Marks `hash` as being filled by a fetch (or no longer): it is not dropped for room. */
  filling(hash: string, now: boolean): void {
    if (now) this.#filling.add(hash);
    else this.#filling.delete(hash);
  }

  /**
   * The ranges of `hash` not received yet, each of at most the range size, in order; only
   * the first while its size is unknown.
   *
   * @returns Nothing when it is not fetched in ranges or is complete.
   */
  missing(hash: string): ContentRange[] {
    const partial = this.#partials.get(hash);
    if (!partial) return [];
    const rangeBytes = this.rangeBytes;
    if (partial.size === null) return [{ hash, offset: 0, length: rangeBytes }];
    const ranges: ContentRange[] = [];
    let at = 0;
    const ends: [number, number] = [partial.size, partial.size];
    for (const [start, end] of [...partial.received, ends]) {
      for (; at < start; at += rangeBytes) {
        ranges.push({ hash, offset: at, length: Math.min(rangeBytes, start - at) });
      }
      at = end;
    }
    return ranges;
  }

  /**
   * Keeps a range received for `hash` (ignored when it is not fetched in ranges, or the
   * bytes no longer fit), and counts it in what this connection carried.
   *
   * @param size The whole content's size, as the range's answer gives it.
   * @throws {RangeError} When that size is not the one known, or the bytes run past it.
   */
  received(hash: string, offset: number, bytes: Uint8Array, size: number): void {
    const partial = this.#partials.get(hash);
    if (!partial) return;
    if (partial.size !== null && partial.size !== size) {
      throw new RangeError(`a range gives the content's size as ${size}, not ${partial.size}`);
    }
    if (offset + bytes.length > size) {
      throw new RangeError(
        `a range of ${bytes.length} bytes at ${offset} runs past the content's ${size}`,
      );
    }
    partial.size = size;
    this.#rangeSize.carried(bytes.length);
    this.#partials.delete(hash); // moved to the end: the most recently used
    this.#partials.set(hash, partial);
    if (partial.buffer === null) {
      if (!this.#makeRoom(size)) {
        this.#partials.delete(hash);
        return;
      }
      partial.buffer = new Uint8Array(size);
      this.#heldBytes += size;
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
    if (partial.buffer) this.#heldBytes -= partial.buffer.length;
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
