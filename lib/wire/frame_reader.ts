import type { WireMessage } from "./types.ts";
import { MAX_FRAME_PAYLOAD } from "./types.ts";
import { decodeMessage } from "./decode.ts";
import { WireError } from "./wire_error.ts";

/** Options for {@linkcode FrameReader}. */
export interface FrameReaderOptions {
  /**
   * Largest accepted payload; a larger length header is refused before any of its
   * payload is buffered.
   *
   * @default {MAX_FRAME_PAYLOAD}
   */
  maxPayload?: number;
}

/**
 * Cuts a byte stream into frames (4-byte little-endian length, then payload), however
 * the bytes were split into chunks. Chunks are kept in a list and joined only once a
 * frame is complete, so buffering costs linear time; a frame lying wholly inside one
 * chunk is returned as a view of that chunk.
 *
 * The reader keeps the chunks it is given and hands out views of them: do not reuse a
 * pushed buffer (copy it first if the source does). After any error the reader is
 * failed and repeats that error.
 *
 * @example Feeding bytes in pieces
 * ```ts
 * import { deepStrictEqual } from "node:assert/strict";
 * import { encodeFrame, FrameReader } from "./mod.ts";
 *
 * const frame = encodeFrame({ type: "Ack", up_to_sequence: 5n });
 * const reader = new FrameReader();
 * reader.push(frame.slice(0, 3));
 * deepStrictEqual(reader.nextMessage(), null);
 * reader.push(frame.slice(3));
 * deepStrictEqual(reader.nextMessage(), { type: "Ack", up_to_sequence: 5n });
 * reader.end();
 * ```
 */
export class FrameReader implements Iterable<WireMessage> {
  #chunks: Uint8Array[] = [];
  /** Index of the first chunk still holding unread bytes. */
  #head = 0;
  /** Bytes of `#chunks[#head]` already consumed. */
  #offset = 0;
  #buffered = 0;
  /** Payload length of the frame being assembled, or -1 before its header is read. */
  #pending = -1;
  #max: number;
  #failed: WireError | null = null;

  /**
   * Makes a reader with these limits.
   *
   * @param options Limits; see {@linkcode FrameReaderOptions}.
   */
  constructor(options: FrameReaderOptions = {}) {
    this.#max = options.maxPayload ?? MAX_FRAME_PAYLOAD;
  }

  /** Bytes received and not yet returned as part of a frame. */
  get bufferedBytes(): number {
    return this.#buffered;
  }

  /**
   * Adds received bytes. The reader keeps a reference to `chunk`.
   *
   * @param chunk The next bytes of the stream.
   * @throws {WireError} `oversized_frame` as soon as a length header above the limit is
   * complete, before its payload is kept.
   */
  push(chunk: Uint8Array): void {
    if (this.#failed) throw this.#failed;
    if (chunk.length === 0) return;
    this.#chunks.push(chunk);
    this.#buffered += chunk.length;
    if (this.#pending < 0 && this.#buffered >= 4) this.#readHeader();
  }

  /**
   * Takes the next whole payload, if one has arrived.
   *
   * @returns The payload (a view when it lay in one chunk), or `null` if incomplete.
   * @throws {WireError} `oversized_frame` for a length header above the limit.
   */
  nextPayload(): Uint8Array | null {
    if (this.#failed) throw this.#failed;
    if (this.#pending < 0) {
      if (this.#buffered < 4) return null;
      this.#readHeader();
    }
    const n = this.#pending;
    if (this.#buffered < n) return null;
    this.#pending = -1;
    return this.#take(n);
  }

  /**
   * Takes and decodes the next whole frame, if one has arrived.
   *
   * @returns The message, or `null` if no whole frame is buffered.
   * @throws {WireError} An oversized frame or a malformed payload.
   */
  nextMessage(): WireMessage | null {
    const payload = this.nextPayload();
    if (payload === null) return null;
    try {
      return decodeMessage(payload);
    } catch (error) {
      if (error instanceof WireError) this.#failed = error;
      throw error;
    }
  }

  /** Yields every whole message buffered so far. */
  *[Symbol.iterator](): Iterator<WireMessage> {
    for (let msg = this.nextMessage(); msg !== null; msg = this.nextMessage()) yield msg;
  }

  /**
   * Declares the end of the stream.
   *
   * @throws {WireError} `truncated_header` or `truncated_payload` if a partial frame is
   * left.
   */
  end(): void {
    if (this.#failed) throw this.#failed;
    if (this.#buffered === 0 && this.#pending < 0) return;
    if (this.#pending < 0) {
      this.#failed = new WireError(
        "truncated_header",
        `Stream ended inside a frame header ('${this.#buffered}' of 4 bytes)`,
      );
    } else {
      this.#failed = new WireError(
        "truncated_payload",
        `Stream ended inside a frame payload ('${this.#buffered}' of '${this.#pending}' bytes)`,
      );
    }
    throw this.#failed;
  }

  #readHeader(): void {
    const h = this.#take(4);
    const n = (h[0]! | (h[1]! << 8) | (h[2]! << 16) | (h[3]! << 24)) >>> 0;
    if (n > this.#max) {
      this.#failed = new WireError(
        "oversized_frame",
        `Frame length header '${n}' exceeds the limit of '${this.#max}' bytes${httpHint(h)}`,
      );
      this.#chunks = [];
      this.#head = 0;
      this.#offset = 0;
      this.#buffered = 0;
      throw this.#failed;
    }
    this.#pending = n;
  }

  /** Removes `n` buffered bytes from the front; `n` <= buffered. */
  #take(n: number): Uint8Array {
    if (n === 0) return EMPTY;
    this.#buffered -= n;
    const first = this.#chunks[this.#head]!;
    const start = this.#offset;
    if (first.length - start >= n) {
      this.#offset += n;
      if (this.#offset === first.length) this.#dropHead();
      return first.subarray(start, start + n);
    }
    const out = new Uint8Array(n);
    let filled = 0;
    while (filled < n) {
      const chunk = this.#chunks[this.#head]!;
      const from = this.#offset;
      const k = Math.min(chunk.length - from, n - filled);
      out.set(chunk.subarray(from, from + k), filled);
      filled += k;
      this.#offset += k;
      if (this.#offset === chunk.length) this.#dropHead();
    }
    return out;
  }

  #dropHead(): void {
    this.#chunks[this.#head] = EMPTY;
    this.#head++;
    this.#offset = 0;
    if (this.#head === this.#chunks.length) {
      this.#chunks = [];
      this.#head = 0;
    } else if (this.#head >= 1024 && this.#head * 2 >= this.#chunks.length) {
      this.#chunks = this.#chunks.slice(this.#head);
      this.#head = 0;
    }
  }
}

const EMPTY = new Uint8Array(0);

/**
 * Decodes every frame of a byte stream, in order.
 *
 * @param source The stream, e.g. `conn.readable`. Its chunks are kept, not copied.
 * @returns The messages; the generator throws when the stream turns out malformed,
 * after yielding every good message before the bad frame.
 * @throws {WireError} An oversized, truncated or malformed frame.
 *
 * @example Reading a stream
 * ```ts
 * import { deepStrictEqual } from "node:assert/strict";
 * import { encodeFrame, readFrames, type WireMessage } from "./mod.ts";
 *
 * const bytes = encodeFrame({ type: "BarrierRequest", sequence: 9n });
 * const got: WireMessage[] = [];
 * for await (const msg of readFrames(ReadableStream.from([bytes]))) got.push(msg);
 * deepStrictEqual(got, [{ type: "BarrierRequest", sequence: 9n }]);
 * ```
 */
export async function* readFrames(
  source: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>,
  options: FrameReaderOptions = {},
): AsyncGenerator<WireMessage, void, undefined> {
  const reader = new FrameReader(options);
  for await (const chunk of source) {
    reader.push(chunk);
    yield* reader;
  }
  reader.end();
}

/**
 * What to add when a "length header" is the start of an HTTP answer: the peer is an HTTP
 * server (a control socket given to `--connect`), not a replication socket.
 */
function httpHint(header: Uint8Array): string {
  return new TextDecoder().decode(header) === "HTTP"
    ? " (the peer answered in HTTP: it is not a replication socket; --connect wants the master's DATA/chronicle.sock, not control.sock)"
    : "";
}
