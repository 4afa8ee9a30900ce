/**
 * Write-back in pieces (docs/PROTOCOL.md §4, "The other way: write-back in pieces"): a local
 * change whose content no connection carries whole is sent as pieces, each a `WriteBack`
 * entry of its own, until the master holds the whole content and decides the change.
 *
 * A piece is the change's entry with three differences: its `content_hash` is a range key
 * (`<hash>@<offset>+<length>`, see `content_range.ts`), its `content_bytes` that slice, and
 * its `local_seq` the change's own with the top bit set ({@linkcode pieceSeq}). The master
 * answers an incomplete content under the piece's number, rejected with the reason
 * `partial: <held> of <size> bytes held` (never an outcome: the change stays open), and
 * the piece that completes it with the change's own outcome, under the change's number.
 * A master that does not take pieces answers the piece's number otherwise (a number that
 * large is out of range for it, and nothing is recorded), and the change is sent whole.
 *
 * @module
 */
import type { WriteBackEntry } from "../wire/mod.ts";
import { type ContentRange, parseRangeKey, RANGE_MAX_BYTES } from "./content_range.ts";
import { LinkSize } from "./link_size.ts";

/** The top bit of a `local_seq`, set on a piece's (no journal reaches it). */
export const PIECE_BIT = 1n << 63n;

/** The `local_seq` of a piece of the change numbered `localSeq`. */
export function pieceSeq(localSeq: number): bigint {
  return PIECE_BIT | BigInt(localSeq);
}

/** The change a piece's `local_seq` belongs to, or `null` when it is not a piece's. */
export function changeOfPiece(seq: bigint): bigint | null {
  const change = seq - PIECE_BIT;
  return change >= 1n && change < PIECE_BIT ? change : null;
}

/** A piece as the master reads it: the entry, the change it belongs to, and its range. */
export interface Piece {
  /** The piece's entry. */
  piece: WriteBackEntry;
  /** The change it belongs to: its number, its content's hash, no bytes. */
  change: WriteBackEntry;
  /** The slice of the content it carries. */
  range: ContentRange;
}

/** The piece an entry is, with its change; `null` for any other entry. Pure. */
export function pieceOf(entry: WriteBackEntry): Piece | null {
  const seq = changeOfPiece(entry.local_seq);
  const range = entry.content_hash === null ? null : parseRangeKey(entry.content_hash);
  if (seq === null || range === null) return null;
  if (entry.operation.type !== "Write" || entry.content_bytes === null) return null;
  const change = { ...entry, local_seq: seq, content_hash: range.hash, content_bytes: null };
  return { piece: entry, change, range };
}

/** The reason a master answers a piece with while its content is not whole. */
const PARTIAL = /^partial: (0|[1-9][0-9]{0,15}) of (0|[1-9][0-9]{0,15}) bytes held$/;

/**
 * The master's answer to a piece of a content it does not hold whole yet.
 *
 * @example
 * ```ts
 * import { parsePartial, partialReason } from "./writeback_pieces.ts";
 * const reason = partialReason(65536, 900000);
 * if (parsePartial(reason)?.held !== 65536) throw new Error(reason);
 * ```
 */
export function partialReason(held: number, size: number): string {
  return `partial: ${held} of ${size} bytes held`;
}

/** What a {@linkcode partialReason} says, or `null` when the reason is another one. */
export function parsePartial(reason: string): { held: number; size: number } | null {
  const match = PARTIAL.exec(reason);
  return match ? { held: Number(match[1]), size: Number(match[2]) } : null;
}

/** A batch of write-back a connection's end left unanswered. */
export interface LostBatch {
  /** The content bytes it carried. */
  bytes: number;
  /** Whether it was a piece. */
  piece: boolean;
}

/**
 * What a replica sends in pieces, across its connections: nothing until a connection ends
 * with a batch unanswered. The piece size then follows the link as the range size does
 * (see `LinkSize`): at most half the largest batch lost, half itself when a piece was
 * lost, doubling each time one connection has carried four pieces' worth; once the largest
 * size has been carried so, changes go whole again (until a connection loses a batch
 * again). A change whose content is larger than the piece size is sent in pieces, from
 * what the master last said it holds.
 *
 * In memory only: a replica started again sends its pieces from the start (the master
 * keeps what it received for a while, and says so).
 */
export class WriteBackPieces {
  /** The piece size; `null` while changes go whole. */
  #pieceSize: LinkSize | null = null;
  /** What the master holds of each change sent in pieces: its content, and how much. */
  readonly #held = new Map<number, { hash: string; held: number }>();

  /** The size of the pieces sent now; `null` while changes are sent whole. */
  get pieceBytes(): number | null {
    return this.#pieceSize?.bytes ?? null;
  }

  /** Whether a content of `size` bytes is sent in pieces now. */
  inPieces(size: number): boolean {
    return this.#pieceSize !== null && size > this.#pieceSize.bytes;
  }

  /**
   * The next piece of change `localSeq`, whose content is `hash` of `size` bytes: from
   * what the master holds of it (of this content; nothing for another), at most `maxLength`
   * bytes (what one message carries).
   */
  nextPiece(
    localSeq: number,
    hash: string,
    size: number,
    maxLength = RANGE_MAX_BYTES,
  ): { offset: number; length: number } {
    const known = this.#held.get(localSeq);
    const offset = known?.hash === hash ? Math.min(known.held, size) : 0;
    const length = Math.min(this.pieceBytes ?? RANGE_MAX_BYTES, maxLength, size - offset);
    return { offset, length };
  }

  /**
   * The master holds `held` bytes of change `localSeq`'s content `hash`, after a piece of
   * `carried` bytes this connection carried.
   */
  heldBy(localSeq: number, hash: string, held: number, carried: number): void {
    this.#held.set(localSeq, { hash, held });
    // The largest pieces get through: the link carries that much, so changes go whole again.
    if (this.#pieceSize?.carried(carried)) this.#pieceSize = null;
  }

  /** Change `localSeq` is answered, or goes whole: what the master held of it is forgotten. */
  forget(localSeq: number): void {
    this.#held.delete(localSeq);
  }

  /**
   * Learns from a connection's end, with the batches it left unanswered (nothing when it
   * ended with none in flight): see the class.
   */
  connectionEnded(lost: readonly LostBatch[]): void {
    if (lost.length > 0) this.#pieceSize ??= new LinkSize();
    this.#pieceSize?.connectionEnded(
      lost.length > 0 ? Math.max(...lost.map((batch) => batch.bytes)) : null,
      lost.some((batch) => batch.piece),
    );
  }
}
