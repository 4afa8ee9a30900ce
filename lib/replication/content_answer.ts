import { type Cas, isContentHash } from "../cas/mod.ts";
import { log } from "../log/mod.ts";
import type { WireMessage } from "../wire/mod.ts";

/**
 * What the master answers to a `ContentFetchRequest` (PROTOCOL.md §2): the manifest of
 * chunked content (the replica then asks for the chunks), the whole bytes of anything
 * else that fits a frame, or `ContentNotFound` for a hash it does not hold, cannot read,
 * or cannot send whole.
 *
 * @param cas Where the content is stored.
 * @param hash The content or chunk asked for.
 * @param maxPayload The connection's largest frame payload.
 * @param readAhead The bytes of `hash` if read ahead (see `RowReadAhead`), verified and
 * within `maxPayload - 256`; else `undefined`, and they are read here.
 */
export async function answerContentFetch(
  cas: Cas,
  hash: string,
  maxPayload: number,
  readAhead?: (hash: string, maxBytes: number) => Uint8Array | undefined,
): Promise<WireMessage> {
  const notFound: WireMessage = { type: "ContentNotFound", content_hash: hash };
  if (!isContentHash(hash)) return notFound;
  try {
    // Most contents asked for are stored whole: looked for first, size and bytes at once.
    const whole = readAhead?.(hash, maxPayload - 256) ??
      await cas.readWholeWithin(hash, maxPayload - 256);
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
