import { AVERAGE_SIZE, findCut, MAX_SIZE, MIN_SIZE, type ScanState } from "./_gear.ts";

/** Smallest chunk the chunker makes, except a content's last chunk: 256 KiB. */
export const CHUNK_MIN_SIZE: number = MIN_SIZE;
/** The chunker's target average chunk size (1 MiB); a manifest's `chunk_size`. */
export const CHUNK_AVERAGE_SIZE: number = AVERAGE_SIZE;
/** Largest chunk the chunker makes: 4 MiB. */
export const CHUNK_MAX_SIZE: number = MAX_SIZE;

/**
 * Splits bytes into content-defined chunks (FastCDC with a gear hash and normalized
 * chunking; 256 KiB min, 1 MiB average, 4 MiB max). Deterministic: the same bytes always
 * give the same cuts, and an edit moves only the cuts near it. Pure.
 *
 * @param bytes The content.
 * @returns The end offset of each chunk in order; the last is `bytes.length`. Empty for
 * empty input.
 *
 * @example Cutting a small buffer
 * ```ts
 * import { chunkBoundaries } from "./chunker.ts";
 * const cuts = chunkBoundaries(new Uint8Array(1000));
 * if (cuts.length !== 1 || cuts[0] !== 1000) throw new Error("one chunk expected");
 * ```
 */
export function chunkBoundaries(bytes: Uint8Array): number[] {
  const cuts: number[] = [];
  const state: ScanState = { fp: 0 };
  let start = 0;
  while (start < bytes.length) {
    state.fp = 0;
    const cut = findCut(bytes, start, start, bytes.length, state);
    start = cut === -1 ? bytes.length : cut;
    cuts.push(start);
  }
  return cuts;
}

/**
 * The streaming form of {@linkcode chunkBoundaries}: feed pieces of any size in order and
 * get each chunk's bytes as soon as its end is found. It holds at most one chunk
 * ({@linkcode CHUNK_MAX_SIZE}) of input, and makes exactly the cuts the pure function makes
 * for the concatenated input.
 *
 * @example Chunking a stream
 * ```ts
 * import { Chunker } from "./chunker.ts";
 * const chunker = new Chunker();
 * const chunks = [...chunker.push(new Uint8Array(10)), ...chunker.push(new Uint8Array(5))];
 * const last = chunker.finish();
 * if (chunks.length !== 0 || last?.length !== 15) throw new Error("one chunk of 15 expected");
 * ```
 */
export class Chunker {
  #buf = new Uint8Array(MAX_SIZE);
  /** Bytes of the current chunk held in `#buf`. */
  #len = 0;
  /** Bytes of `#buf` already scanned; the fingerprint covers them. */
  #scanned = 0;
  #state: ScanState = { fp: 0 };

  /**
   * Feeds the next piece of input. The piece is copied; the caller may reuse it.
   *
   * @param piece The next bytes.
   * @returns The chunks completed by this piece, in order (fresh arrays, often none).
   */
  push(piece: Uint8Array): Uint8Array[] {
    const done: Uint8Array[] = [];
    let pos = 0;
    while (pos < piece.length) {
      const take = Math.min(piece.length - pos, MAX_SIZE - this.#len);
      this.#buf.set(piece.subarray(pos, pos + take), this.#len);
      this.#len += take;
      pos += take;
      this.#drain(done);
    }
    return done;
  }

  /**
   * Ends the input and returns the last chunk; the chunker is then empty and can be reused.
   *
   * @returns The remaining bytes as the final chunk, or `null` when nothing remains.
   */
  finish(): Uint8Array | null {
    const last = this.#len > 0 ? this.#buf.slice(0, this.#len) : null;
    this.#len = 0;
    this.#scanned = 0;
    this.#state.fp = 0;
    return last;
  }

  /** Cuts every chunk whose end lies in the held bytes, keeping the unfinished rest. */
  #drain(done: Uint8Array[]): void {
    for (;;) {
      const cut = findCut(this.#buf, 0, this.#scanned, this.#len, this.#state);
      if (cut === -1) {
        this.#scanned = this.#len;
        return;
      }
      done.push(this.#buf.slice(0, cut));
      this.#buf.copyWithin(0, cut, this.#len);
      this.#len -= cut;
      this.#scanned = 0;
      this.#state.fp = 0;
    }
  }
}
