import { openForReadOrNull } from "./_files.ts";
import { type LocalStore, markUsed } from "./_local_store.ts";

/** A slice of an object stored whole, with the object's size. */
export interface ObjectRange {
  /** The bytes from the offset asked for: fewer than asked at the object's end. */
  bytes: Uint8Array;
  /** The whole object's size. */
  size: number;
}

/**
 * Reads `length` bytes of an object stored whole from `offset`, unverified: what a row
 * holds, or a positioned read of its file, so the cost follows the slice, not the object
 * (a peer fetching a content in small ranges would otherwise have the whole read and
 * hashed for each). Only for a reader that checks the whole it assembles against its hash.
 *
 * @returns The slice (a copy) and the object's size; `null` when it is not stored whole.
 */
export function readObjectRange(
  store: LocalStore,
  hash: string,
  offset: number,
  length: number,
): ObjectRange | null {
  const row = store.small?.get(hash);
  if (row != null) return { bytes: row.slice(offset, offset + length), size: row.length };
  const path = store.objectPath(hash);
  const file = openForReadOrNull(path);
  if (file === null) return null;
  try {
    const info = file.statSync();
    if (!info.isFile) return null;
    markUsed(path, info.mtime); // read, as a whole read would be: not the next evicted
    const bytes = new Uint8Array(Math.max(0, Math.min(length, info.size - offset)));
    if (bytes.length === 0) return { bytes, size: info.size };
    file.seekSync(offset, Deno.SeekMode.Start);
    let read = 0;
    while (read < bytes.length) {
      const n = file.readSync(bytes.subarray(read));
      if (n === null) break; // RACE: truncated since its status: what is there
      read += n;
    }
    return { bytes: bytes.subarray(0, read), size: info.size };
  } finally {
    file.close();
  }
}

/**
 * Reads `length` bytes of a content from `offset`, unverified, whether it is stored whole
 * or chunked (from the chunks the slice spans): for a reader whose peer checks the whole
 * it assembles (a replica sending its change in pieces).
 *
 * @returns The slice (fewer bytes at the content's end); `null` when the content, or a
 * chunk the slice spans, is not stored here.
 */
export async function readContentRange(
  store: LocalStore,
  hash: string,
  offset: number,
  length: number,
): Promise<Uint8Array | null> {
  const whole = readObjectRange(store, hash, offset, length);
  if (whole !== null) return whole.bytes;
  const manifest = await store.readManifest(hash);
  if (manifest === null) return null;
  const end = Math.min(offset + length, manifest.total_size);
  const out = new Uint8Array(Math.max(0, end - offset));
  for (const chunk of manifest.chunks) {
    const from = Math.max(offset, chunk.offset);
    const to = Math.min(end, chunk.offset + chunk.size);
    if (from >= to) continue;
    const part = readObjectRange(store, chunk.hash, from - chunk.offset, to - from);
    if (part === null || part.bytes.length !== to - from) return null;
    out.set(part.bytes, from - offset);
  }
  return out;
}
