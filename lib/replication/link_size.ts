import { RANGE_MAX_BYTES, RANGE_MIN_BYTES } from "./content_range.ts";

/**
 * The size grows once one connection has carried this many of it: on a link that shows it
 * carries more, not merely with each answer.
 */
const GROWTH_UNITS = 4;

/**
 * How large a piece of content one message carries on a link that drops often (ranges
 * fetched, pieces written back: docs/PROTOCOL.md §4). At a connection's end with messages
 * lost it drops to at most half the largest lost, and to half itself when one of its own
 * size was among them ({@linkcode RANGE_MIN_BYTES} at least); it doubles each time one
 * connection has carried {@linkcode GROWTH_UNITS} of it (up to {@linkcode RANGE_MAX_BYTES}).
 */
export class LinkSize {
  #bytes = RANGE_MAX_BYTES;
  /** Bytes the current connection carried since the size last changed. */
  #carried = 0;

  /** The size now. */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * Learns from a connection's end.
   *
   * @param largestLost The bytes of the largest message it lost; `null` when it lost none
   * to learn from (the size stays).
   * @param ownLost Whether a message of this size was among those lost (it halves).
   */
  connectionEnded(largestLost: number | null, ownLost: boolean): void {
    this.#carried = 0;
    if (largestLost === null) return;
    const shrunk = ownLost ? this.#bytes / 2 : this.#bytes;
    this.#bytes = clamp(Math.floor(Math.min(shrunk, largestLost / 2)));
  }

  /**
   * Counts `bytes` this connection carried at this size.
   *
   * @returns Whether it carried {@linkcode GROWTH_UNITS} of the largest size: the link
   * carries that much (the size then stays where it is).
   */
  carried(bytes: number): boolean {
    this.#carried += bytes;
    if (this.#carried < GROWTH_UNITS * this.#bytes) return false;
    this.#carried = 0;
    if (this.#bytes >= RANGE_MAX_BYTES) return true;
    this.#bytes = clamp(this.#bytes * 2);
    return false;
  }
}

function clamp(bytes: number): number {
  return Math.max(RANGE_MIN_BYTES, Math.min(RANGE_MAX_BYTES, bytes));
}
