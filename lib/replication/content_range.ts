/**
 * Ranged content fetches (docs/PROTOCOL.md §4, "What a connection must carry"): a
 * `ContentFetchRequest` whose `content_hash` is a range key, `<hash>@<offset>+<length>`,
 * asks for a slice of a content the master stores whole. The answer is a
 * `ContentFetchResponse` carrying the same key, the slice as its `content` and the whole
 * content's size as its `size`. A master that does not serve ranges answers
 * `ContentNotFound` (the key is not a content hash), and the replica fetches whole.
 *
 * @module
 */
import { CHUNK_MAX_SIZE, CorruptContentError } from "../cas/mod.ts";
import type { ContentFetchResponseMessage } from "../wire/mod.ts";

/** The smallest range a replica asks for: content under 4 KiB travels inline anyway. */
export const RANGE_MIN_BYTES = 4096;
/** The largest range a replica asks for, and a master answers. */
export const RANGE_MAX_BYTES = 1024 * 1024;

/** A slice of a content. */
export interface ContentRange {
  /** The whole content's hash. */
  hash: string;
  /** Where the slice starts. */
  offset: number;
  /** How many bytes it holds at most (fewer at the content's end). */
  length: number;
}

const RANGE_KEY = /^([0-9a-f]{64})@(0|[1-9][0-9]{0,14})\+([1-9][0-9]{0,14})$/;

/**
 * The `content_hash` that asks for `range`.
 *
 * @example
 * ```ts
 * import { rangeKey } from "./content_range.ts";
 * const key = rangeKey({ hash: "ab".repeat(32), offset: 0, length: 4096 });
 * if (!key.endsWith("@0+4096")) throw new Error(key);
 * ```
 */
export function rangeKey(range: ContentRange): string {
  return `${range.hash}@${range.offset}+${range.length}`;
}

/**
 * The range a `content_hash` asks for, or `null` when it is not a range key: decimal
 * numbers without leading zeros, a positive length, an offset and length of at most 15
 * digits (safe integers).
 */
export function parseRangeKey(key: string): ContentRange | null {
  const match = RANGE_KEY.exec(key);
  if (!match) return null;
  const [, hash, offset, length] = match; // the pattern holds a content hash's form
  return { hash: hash!, offset: Number(offset), length: Number(length) };
}

/**
 * A range's answer, checked against the range asked for and the content's size (when
 * known; else the answer's, which must be that of a content stored whole): from one byte
 * to the length asked for, within the content.
 *
 * @returns The bytes, and the whole content's size.
 * @throws {CorruptContentError} When they are not (the content is fetched again).
 */
export function rangeAnswered(
  range: ContentRange,
  size: number | null,
  answer: ContentFetchResponseMessage,
): { bytes: Uint8Array; size: number } {
  const { length } = answer.content;
  const whole = Number(answer.size);
  const problem = answer.chunk_manifest !== null
    ? "a range's answer holds a chunk manifest"
    : size !== null && whole !== size
    ? `a range's answer gives its size as ${answer.size}, not ${size}`
    : size === null && !(whole > 0 && whole <= CHUNK_MAX_SIZE)
    ? `a range's answer gives its size as ${answer.size}, more than a content stored whole`
    : length === 0 || length > range.length || range.offset + length > whole
    ? `a range's answer holds ${length} bytes at ${range.offset} (asked for ${range.length})`
    : null;
  if (problem !== null) throw new CorruptContentError(range.hash, null, problem);
  return { bytes: answer.content, size: whole };
}
