import { createHash } from "node:crypto";
import { CorruptContentError } from "./errors.ts";

const CONTENT_HASH = /^[0-9a-f]{64}$/;

/**
 * Hashes bytes the way every content key in Chronicle is made (PROTOCOL.md §2).
 *
 * @param bytes The content.
 * @returns The lowercase hex SHA-256 of `bytes` (64 characters).
 *
 * @example Hashing nothing
 * ```ts
 * import { sha256Hex } from "./content_hash.ts";
 * const hash = sha256Hex(new Uint8Array());
 * if (!hash.startsWith("e3b0c442")) throw new Error("unexpected empty hash");
 * ```
 */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/**
 * Tells whether a string is a content hash: exactly 64 lowercase hex characters. Safe to
 * use as a file name once it passes.
 *
 * @param s Any string, typically from the network.
 * @returns `true` for a well-formed hash.
 *
 * @example Checking hashes
 * ```ts
 * import { isContentHash } from "./content_hash.ts";
 * if (!isContentHash("ab".repeat(32)) || isContentHash("../x")) throw new Error("wrong");
 * ```
 */
export function isContentHash(s: string): boolean {
  return typeof s === "string" && CONTENT_HASH.test(s);
}

/**
 * Rejects anything that is not a content hash.
 *
 * @param hash The value to check.
 * @param what What the value is, for the message.
 * @throws {TypeError} When `hash` is not 64 lowercase hex characters.
 */
export function assertContentHash(hash: string, what = "content hash"): void {
  if (!isContentHash(hash)) {
    throw new TypeError(
      `Invalid ${what} "${String(hash).slice(0, 80)}": expected 64 lowercase hex characters`,
    );
  }
}

/**
 * The hash each buffer was last found to have by {@linkcode assertBytesHash}. Content
 * bytes are never changed once received (a corrupted copy is always a new buffer), so a
 * buffer checked once is not hashed again when the next step checks it too: a replica's
 * fetched content is checked as it arrives and again by the write that puts it on disk.
 */
const checked = new WeakMap<Uint8Array, string>();

/**
 * Checks that bytes are the content `hash` names, before anything uses them (stores,
 * writes or hands them on). A buffer that passed for `hash` before is not hashed again.
 *
 * @param hash The hash the bytes must have.
 * @param bytes The bytes.
 * @throws {CorruptContentError} When they hash to something else.
 * @example
 * ```ts
 * import { assertBytesHash, sha256Hex } from "./content_hash.ts";
 * const bytes = new TextEncoder().encode("x");
 * assertBytesHash(sha256Hex(bytes), bytes); // no error
 * ```
 */
export function assertBytesHash(hash: string, bytes: Uint8Array): void {
  if (checked.get(bytes) === hash) return;
  const actual = sha256Hex(bytes);
  if (actual !== hash) throw new CorruptContentError(hash, actual);
  checked.set(bytes, hash);
}
