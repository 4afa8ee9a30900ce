import { type Cas, isContentHash } from "../cas/mod.ts";
import { log } from "../log/mod.ts";
import type { WireMessage } from "../wire/mod.ts";
import { parseRangeKey, RANGE_MAX_BYTES } from "./content_range.ts";

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
 */
export async function answerContentFetch(
  cas: Cas,
  hash: string,
  maxPayload: number,
  readAhead?: (hash: string, maxBytes: number) => Uint8Array | undefined,
): Promise<WireMessage> {
  const notFound: WireMessage = { type: "ContentNotFound", content_hash: hash };
  if (!isContentHash(hash)) return answerContentRange(cas, hash, maxPayload);
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
 * at or before `offset`. The slice is read alone, unverified (`Cas.readRange`): the
 * replica checks the whole it assembles, and a range costs the master what it carries.
 */
function answerContentRange(cas: Cas, key: string, maxPayload: number): WireMessage {
  const notFound: WireMessage = { type: "ContentNotFound", content_hash: key };
  const range = parseRangeKey(key);
  if (range === null) return notFound;
  const length = Math.min(range.length, RANGE_MAX_BYTES, maxPayload - ANSWER_OVERHEAD);
  try {
    const read = cas.readRange(range.hash, range.offset, length);
    if (read === null || read.bytes.length === 0) return notFound;
    return {
      type: "ContentFetchResponse",
      content_hash: key,
      content: read.bytes,
      size: BigInt(read.size),
      chunk_manifest: null,
    };
  } catch (error) {
    log("warn", "cannot serve a range of content", { hash: range.hash, error });
    return notFound;
  }
}
