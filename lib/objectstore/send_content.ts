import { type Cas, ContentNotFoundError } from "../cas/mod.ts";
import { manifestKey, objectKey } from "./keys.ts";
import type { S3Client } from "./s3_client.ts";

/** What {@linkcode sendContent} did. */
export interface SentContent {
  /** Bytes put into the bucket. */
  bytes: number;
  /** Objects the bucket held already, so not sent. */
  alreadyThere: number;
  /** The chunks of a large content, now all in the bucket (empty for a whole object). */
  chunks: string[];
}

/**
 * Makes sure the bucket holds one content: the whole object, or for a large content its
 * chunks and then its manifest (so a manifest in the bucket never names a missing chunk).
 * Each object is looked for first and sent only when absent: keys are hashes, so what is
 * there already holds these bytes, and is never overwritten.
 *
 * @param cas The local store, which verifies what it reads.
 * @param client The bucket.
 * @param prefix Key prefix (`""` or ending in `/`).
 * @param hash A content or chunk hash.
 * @returns Bytes sent and objects found there already.
 * @throws {Error} When the local store lacks it (it cannot be sent), or the bucket fails.
 */
export async function sendContent(
  cas: Cas,
  client: S3Client,
  prefix: string,
  hash: string,
): Promise<SentContent> {
  const sent: SentContent = { bytes: 0, alreadyThere: 0, chunks: [] };
  const manifest = await cas.manifest(hash);
  if (manifest === null) {
    await sendObject(cas, client, prefix, hash, sent);
    return sent;
  }
  for (const chunk of new Set(manifest.chunks.map((ref) => ref.hash))) {
    await sendObject(cas, client, prefix, chunk, sent);
    sent.chunks.push(chunk);
  }
  const key = manifestKey(prefix, hash);
  if ((await client.headObject(key)) !== null) {
    sent.alreadyThere++;
    return sent;
  }
  const json = new TextEncoder().encode(JSON.stringify(manifest));
  await client.putObject(key, json, "application/json");
  sent.bytes += json.length;
  return sent;
}

async function sendObject(
  cas: Cas,
  client: S3Client,
  prefix: string,
  hash: string,
  sent: SentContent,
): Promise<void> {
  const key = objectKey(prefix, hash);
  if ((await client.headObject(key)) !== null) {
    sent.alreadyThere++;
    return;
  }
  let bytes: Uint8Array;
  try {
    bytes = await cas.readBytes(hash); // verified against its hash
  } catch (error) {
    if (error instanceof ContentNotFoundError) {
      throw new Error(`Cannot upload "${hash}": it is not in the local store`, { cause: error });
    }
    throw error;
  }
  await client.putObject(key, bytes);
  sent.bytes += bytes.length;
}
