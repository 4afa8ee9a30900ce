import { AmbiguousIdError, type IdKind, UnknownIdError } from "./errors.ts";

/** What a snapshot or transaction ID prefix may be: lowercase hex and dashes, 4 to 36 long. */
const ID_PREFIX = /^[0-9a-f-]{4,36}$/;

/**
 * Normalizes an ID or ID prefix as given by a person (trimmed, lowercased) and checks it
 * can name a snapshot or transaction. Pure.
 *
 * @param kind What the ID names, for the message.
 * @param id The ID or prefix as given.
 * @returns The normalized prefix.
 * @throws {RangeError} When it is shorter than 4 characters, longer than an ID, or not hex.
 *
 * @example
 * ```ts
 * import { parseIdPrefix } from "./lookup.ts";
 * if (parseIdPrefix("snapshot", " 0B6C ") !== "0b6c") throw new Error("not normalized");
 * ```
 */
export function parseIdPrefix(kind: IdKind, id: string): string {
  const prefix = typeof id === "string" ? id.trim().toLowerCase() : "";
  if (!ID_PREFIX.test(prefix)) {
    throw new RangeError(
      `Invalid ${kind} ID "${id}": give the ID or a unique prefix of at least 4 hex characters`,
    );
  }
  return prefix;
}

/**
 * Decides which ID a prefix names from the IDs that start with it. Pure.
 *
 * @param kind What the ID names, for the error.
 * @param id The prefix as given, for the error.
 * @param matches The stored IDs starting with the prefix (a few are enough to report).
 * @returns The one match.
 * @throws {UnknownIdError} When there is none.
 * @throws {AmbiguousIdError} When there are several.
 */
export function pickIdMatch(kind: IdKind, id: string, matches: readonly string[]): string {
  if (matches.length === 0) throw new UnknownIdError(kind, id);
  if (matches.length > 1) throw new AmbiguousIdError(kind, id, [...matches]);
  return matches[0]!;
}

/**
 * The newest `limit` of `items` (which are oldest first), still oldest first; all of them
 * when `limit` is absent or negative. Pure.
 *
 * @param items Oldest first.
 * @param limit How many of the newest to keep.
 * @returns The kept items.
 */
export function newestOf<T>(items: readonly T[], limit: number | undefined): T[] {
  if (limit === undefined || limit < 0) return [...items];
  return items.slice(Math.max(0, items.length - limit));
}
