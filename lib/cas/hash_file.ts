import { createHash } from "node:crypto";

/** What {@linkcode hashFile} read. */
export interface FileHash {
  /** Lowercase hex SHA-256 of the bytes read (the content key, PROTOCOL.md §2). */
  hash: string;
  /** How many bytes were read. */
  size: number;
}

/**
 * Hashes a file's content the way every content key in Chronicle is made, reading it in
 * pieces (a file of any size is never held whole). The one place files are hashed
 * outside the CAS's own writes: captures for diffs, disk checks, checkpoints.
 *
 * @param path The file (a link at `path` is followed, as by any open).
 * @returns The hash and the number of bytes read.
 * @throws {Deno.errors.NotFound} When nothing is at `path`.
 *
 * @example Hashing a file
 * ```ts
 * import { hashFile } from "./hash_file.ts";
 * const path = await Deno.makeTempFile();
 * const { hash, size } = await hashFile(path);
 * if (size !== 0 || !hash.startsWith("e3b0c442")) throw new Error("unexpected hash");
 * await Deno.remove(path);
 * ```
 */
export async function hashFile(path: string): Promise<FileHash> {
  const hasher = createHash("sha256");
  let size = 0;
  using file = await Deno.open(path, { read: true });
  const buffer = new Uint8Array(256 * 1024);
  for (let n = await file.read(buffer); n !== null; n = await file.read(buffer)) {
    hasher.update(buffer.subarray(0, n));
    size += n;
  }
  return { hash: hasher.digest("hex"), size };
}
