import { forEachLimited, sharedWork, TaskLimiter } from "../concurrency/mod.ts";
import { CHUNK_MAX_SIZE, CorruptContentError } from "../cas/mod.ts";
import type { ContentFetchResponseMessage, ContentNotFoundMessage } from "../wire/mod.ts";
import { type ContentRange, rangeAnswered } from "./content_range.ts";
import type { PartialContents } from "./partial_contents.ts";

/** Ranges of one content asked for at once. */
const RANGES_IN_FLIGHT = 4;

/** Asks the master for one range of a content (a `ContentFetchRequest` with a range key). */
export type RangeRequest = (
  range: ContentRange,
) => Promise<ContentFetchResponseMessage | ContentNotFoundMessage>;

/**
 * A connection's fetches of contents in ranges (see `PartialContents`): what is missing of
 * each, {@linkcode RANGES_IN_FLIGHT} ranges at a time, until it is whole. Concurrent
 * fetches of one content share the work, and the contents filled at once take at most
 * what the partial contents may hold, so none is dropped for another's room.
 */
export class RangeFetches {
  readonly #partials: PartialContents;
  readonly #request: RangeRequest;
  readonly #slots: TaskLimiter;
  readonly #fetching = new Map<string, Promise<Uint8Array | null>>();

  /**
   * @param partials The replica's contents fetched in ranges.
   * @param request Asks for one range.
   */
  constructor(partials: PartialContents, request: RangeRequest) {
    this.#partials = partials;
    this.#request = request;
    this.#slots = new TaskLimiter(64, partials.maxBytes);
  }

  /**
   * Whether `hash` is fetched in ranges, for a fetch that knows its size or not: one of
   * another known size is not that content (a size that lies), and is fetched whole.
   */
  wants(hash: string, size: number | undefined): boolean {
    const known = this.#partials.sizeOf(hash);
    return known !== undefined && (known === null || size === undefined || known === size);
  }

  /**
   * Fetches what is missing of `hash`, until it is whole.
   *
   * @returns The whole content (not checked yet), or `null` when the master refused a
   * range, or the partial content was dropped meanwhile: then it is fetched whole.
   * @throws {CorruptContentError} When a range's answer does not fit what was asked.
   */
  fetch(hash: string): Promise<Uint8Array | null> {
    return sharedWork(this.#fetching, hash, () =>
      this.#slots.run(async () => {
        this.#partials.filling(hash, true);
        try {
          return await this.#fill(hash);
        } finally {
          this.#partials.filling(hash, false);
        }
      }, this.#partials.sizeOf(hash) ?? CHUNK_MAX_SIZE));
  }

  async #fill(hash: string): Promise<Uint8Array | null> {
    const partials = this.#partials;
    for (;;) {
      const whole = partials.take(hash);
      if (whole !== null) return whole;
      const missing = partials.missing(hash);
      if (missing.length === 0) return null;
      let refused = false;
      await forEachLimited(missing, RANGES_IN_FLIGHT, async (range) => {
        if (refused) return;
        const answer = await this.#request(range);
        if (answer.type === "ContentNotFound") refused = true;
        else {
          const { bytes, size } = rangeAnswered(range, partials.sizeOf(hash) ?? null, answer);
          try {
            partials.received(hash, range.offset, bytes, size);
          } catch (error) {
            // Another size than an earlier range's: the master's answers do not agree.
            if (!(error instanceof RangeError)) throw error;
            throw new CorruptContentError(hash, null, error.message);
          }
        }
      });
      if (refused) {
        partials.forget(hash);
        return null;
      }
    }
  }
}
