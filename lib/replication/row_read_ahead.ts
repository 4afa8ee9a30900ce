import type { Cas } from "../cas/mod.ts";
import { log } from "../log/mod.ts";

/** Contents one read ahead asks for at most: the one wanted and those queued after it. */
export const READ_AHEAD_MAX = 32;

/** Contents held read ahead at most, oldest dropped first (each under 64 KiB: a row). */
const HELD_MAX = 64;

/**
 * The master's read-ahead of content fetches: when a fetched content is not held, it and
 * the next ones its replica queued are read together, in one read transaction of the
 * CAS's table (`Cas.readSmallWithin`, verified), rather than in one locked read each. A
 * content read ahead serves one answer; at most {@linkcode HELD_MAX} are held (a few
 * MiB), so those of a connection that went away are soon dropped. What is not a row here
 * (a file, chunked, absent, corrupt) is read as before by its own answer.
 */
export class RowReadAhead {
  readonly #cas: Cas;
  readonly #held = new Map<string, Uint8Array>();

  /** @param cas The master's CAS. */
  constructor(cas: Cas) {
    this.#cas = cas;
  }

  /**
   * The bytes of `hash` if it is stored as a row of at most `maxBytes`, read now with those
   * of `next` not held yet, or read ahead before; `undefined` otherwise.
   *
   * @param hash The content asked for.
   * @param next The contents queued after it, most likely asked for next.
   * @param maxBytes The most bytes of an answer's content.
   * @returns The verified bytes, or `undefined` (read the content on its own).
   */
  take(hash: string, next: readonly string[], maxBytes: number): Uint8Array | undefined {
    if (!this.#held.has(hash)) this.#readAhead(hash, next, maxBytes);
    const bytes = this.#held.get(hash);
    this.#held.delete(hash);
    return bytes !== undefined && bytes.length <= maxBytes ? bytes : undefined;
  }

  #readAhead(hash: string, next: readonly string[], maxBytes: number): void {
    const wanted = [hash, ...next.filter((other) => other !== hash && !this.#held.has(other))]
      .slice(0, READ_AHEAD_MAX);
    let rows: Map<string, Uint8Array>;
    try {
      rows = this.#cas.readSmallWithin(wanted, maxBytes);
    } catch (error) {
      // Each answer then reads its own content, and reports what it cannot read.
      log("warn", "cannot read ahead contents for fetches", { error });
      return;
    }
    for (const [found, bytes] of rows) this.#held.set(found, bytes);
    for (const oldest of this.#held.keys()) {
      if (this.#held.size <= HELD_MAX) break;
      this.#held.delete(oldest);
    }
  }
}
