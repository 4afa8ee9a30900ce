import { type Cas, CHUNKING_THRESHOLD, isContentHash } from "../cas/mod.ts";
import { log } from "../log/mod.ts";
import type { WireMessage } from "../wire/mod.ts";
import { type ContentRange, parseRangeKey, RANGE_MAX_BYTES } from "./content_range.ts";

/** What a frame holds beside an answer's content, at most (its key, size and tags). */
const ANSWER_OVERHEAD = 256;

/**
 * What the master answers to a `ContentFetchRequest` (PROTOCOL.md §2): the manifest of
 * chunked content (the replica then asks for the chunks), the whole bytes of anything
 * else that fits a frame, or `ContentNotFound` for a hash it does not hold, cannot read,
 * or cannot send whole. A range key asks for a slice instead (see
 * {@linkcode answerContentRange}).
 *
 * @param cas Where the content is stored.
 * @param hash The content or chunk asked for.
 * @param maxPayload The connection's largest frame payload.
 * @param readAhead The bytes of `hash` if read ahead (see `RowReadAhead`), verified and
 * within `maxPayload - 256` (see `ANSWER_OVERHEAD`); else `undefined`, and they are read here.
 * @param ranges Where contents read for ranges are kept: given, a range key is answered
 * (see {@linkcode answerContentRange}); else it is not found, as any other key that is
 * not a content hash.
 */
export async function answerContentFetch(
  cas: Cas,
  hash: string,
  maxPayload: number,
  readAhead?: (hash: string, maxBytes: number) => Uint8Array | undefined,
  ranges?: RecentContents,
): Promise<WireMessage> {
  const notFound: WireMessage = { type: "ContentNotFound", content_hash: hash };
  if (!isContentHash(hash)) {
    return ranges ? await answerContentRange(cas, hash, maxPayload, ranges) : notFound;
  }
  try {
    // Most contents asked for are stored whole: looked for first, size and bytes at once.
    const whole = readAhead?.(hash, maxPayload - ANSWER_OVERHEAD) ??
      await cas.readWholeWithin(hash, maxPayload - ANSWER_OVERHEAD);
    if (whole instanceof Uint8Array) {
      return {
        type: "ContentFetchResponse",
        content_hash: hash,
        content: whole,
        size: BigInt(whole.length),
        chunk_manifest: null,
      };
    }
    if (whole !== null) {
      log("error", "stored object too large to send whole", { hash, size: whole.tooLarge });
      return notFound;
    }
    const manifest = await cas.manifest(hash);
    if (!manifest) return notFound;
    return {
      type: "ContentFetchResponse",
      content_hash: hash,
      content: new Uint8Array(),
      size: BigInt(manifest.total_size),
      chunk_manifest: JSON.stringify(manifest),
    };
  } catch (error) {
    log("warn", "cannot serve content", { hash, error });
    return notFound;
  }
}

/**
 * The master's answer to a range key (see `content_range.ts`): the slice of a content it
 * stores whole, from `offset`, of at most the length asked for, {@linkcode RANGE_MAX_BYTES}
 * and what the frame holds; or `ContentNotFound` (carrying the key) when the content is
 * not stored whole (chunked content is asked for by its chunks), cannot be read, or ends
 * before `offset`. Whole contents are read verified, and kept a while in `recent`: a
 * replica asks for many slices of one content in a row.
 */
export async function answerContentRange(
  cas: Cas,
  key: string,
  maxPayload: number,
  recent: RecentContents,
): Promise<WireMessage> {
  const notFound: WireMessage = { type: "ContentNotFound", content_hash: key };
  const range: ContentRange | null = parseRangeKey(key);
  if (range === null) return notFound;
  try {
    const whole = await recent.read(cas, range.hash);
    if (whole === null || range.offset >= whole.length) return notFound;
    const length = Math.min(range.length, RANGE_MAX_BYTES, maxPayload - ANSWER_OVERHEAD);
    return {
      type: "ContentFetchResponse",
      content_hash: key,
      // A copy: a view would keep the whole content alive while the answer waits to be
      // sent, and the send budget counts only the slice (a peer asking for one byte of
      // many large contents, reading nothing, would hold them all).
      content: whole.slice(range.offset, range.offset + length),
      size: BigInt(whole.length),
      chunk_manifest: null,
    };
  } catch (error) {
    log("warn", "cannot serve a range of content", { hash: range.hash, error });
    return notFound;
  }
}

/**
 * The contents the master read last to answer ranges, verified, by hash: at most
 * `maxBytes` together, the least recently used dropped first. Only contents stored whole
 * (under the chunking threshold) are read. A replica asks for many ranges of one content
 * in a row: each is sliced from the content read for the first. A peer asking for ranges
 * of many contents makes the master read each whole, as whole fetches of them would; the
 * fetch scheduler bounds how many answers are prepared at once.
 */
export class RecentContents {
  readonly #maxBytes: number;
  readonly #held = new Map<string, Uint8Array>();
  #bytes = 0;

  /**
   * Holds nothing yet.
   *
   * @param maxBytes The most bytes held together.
   */
  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** The bytes held together now. */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * The whole content of `hash`, verified: held, or read and held.
   *
   * @returns `null` when it is not stored whole.
   * @throws {CorruptContentError} When the stored bytes do not match the hash.
   */
  async read(cas: Cas, hash: string): Promise<Uint8Array | null> {
    const held = this.#held.get(hash);
    if (held) {
      this.#held.delete(hash); // moved to the end: the most recently used
      this.#held.set(hash, held);
      return held;
    }
    const read = await cas.readWholeWithin(hash, CHUNKING_THRESHOLD);
    if (!(read instanceof Uint8Array)) return null;
    if (read.length > this.#maxBytes || this.#held.has(hash)) return read;
    this.#held.set(hash, read);
    this.#bytes += read.length;
    for (const [oldest, bytes] of this.#held) {
      if (this.#bytes <= this.#maxBytes) break;
      this.#held.delete(oldest);
      this.#bytes -= bytes.length;
    }
    return read;
  }
}
