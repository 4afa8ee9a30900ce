import { type Cas, EMPTY_HASH } from "../cas/mod.ts";
import type { PathFilter } from "../filter/mod.ts";
import { log } from "../log/mod.ts";
import { isFolderMode, type Iteration } from "../store/mod.ts";
import { encodeFrame, type NotificationMessage } from "../wire/mod.ts";

/** Content below this many bytes travels inside the notification (PROTOCOL.md §2). */
export const INLINE_LIMIT = 4096;

/**
 * Iterations whose contents one {@linkcode NotificationSource.prefetch} reads ahead at most
 * (a replay page's size): what it holds is bounded by this many contents under
 * {@linkcode INLINE_LIMIT} bytes, and its read transaction by this many reads.
 */
const PREFETCH_MAX = 1024;

/** The content of the empty content's hash, inlined without a lookup. */
const NO_BYTES = new Uint8Array(0);

/**
 * The `Notification` for an iteration. Pure.
 *
 * @param iteration The master iteration.
 * @param inline The content, for content under {@linkcode INLINE_LIMIT} bytes; else `null`.
 * @returns The message.
 */
export function notificationFor(
  iteration: Iteration,
  inline: Uint8Array | null,
): NotificationMessage {
  return {
    type: "Notification",
    sequence: BigInt(iteration.sequence),
    filepath: iteration.path,
    content_hash: iteration.deleted ? "" : iteration.hash,
    size: BigInt(iteration.deleted ? 0 : iteration.size),
    permissions: BigInt(iteration.deleted ? 0 : iteration.mode),
    is_deletion: iteration.deleted,
    inline_content: iteration.deleted ? null : inline,
  };
}

/**
 * Turns master iterations into encoded `Notification` frames, once for every replica:
 * small content is read from the CAS and inlined; filtered paths give `null`.
 */
export class NotificationSource {
  readonly #cas: Cas;
  readonly #filter: PathFilter;
  /**
   * Small contents read ahead for a page of iterations ({@linkcode NotificationSource.prefetch}),
   * by iteration: dropped with the page, so pages of several replicas never mix.
   */
  readonly #prefetched = new WeakMap<Iteration, Uint8Array>();

  /**
   * @param cas The master's CAS.
   * @param filter The master-to-replica filter.
   */
  constructor(cas: Cas, filter: PathFilter) {
    this.#cas = cas;
    this.#filter = filter;
  }

  /** Whether notifications of an iteration's path are withheld from replicas. */
  #filtered(iteration: Iteration): boolean {
    return this.#filter.ignores(iteration.path, isFolderMode(iteration.mode));
  }

  /** Whether an iteration's notification may carry its content (under the inline limit). */
  #inlined(iteration: Iteration): boolean {
    return !iteration.deleted && iteration.hash !== EMPTY_HASH && iteration.size < INLINE_LIMIT;
  }

  /**
   * Reads ahead, in one read of the CAS's table, the small contents {@linkcode frame} will
   * inline for these iterations (a page of a replay, or what was just recorded): one read
   * each costs SQLite's locks each time. Only the first {@linkcode PREFETCH_MAX}
   * iterations are read ahead; the others are read one by one.
   *
   * @param iterations The iterations whose frames are built next.
   */
  prefetch(iterations: readonly Iteration[]): void {
    const wanted = iterations.slice(0, PREFETCH_MAX).filter((iteration) =>
      this.#inlined(iteration) && !this.#filtered(iteration)
    );
    if (wanted.length === 0) return;
    let rows: Map<string, Uint8Array>;
    try {
      rows = this.#cas.readSmallWithin(wanted.map((iteration) => iteration.hash), INLINE_LIMIT - 1);
    } catch (error) {
      // Each frame then reads its own content, and reports what it cannot read.
      log("warn", "cannot read ahead contents for notifications", { error });
      return;
    }
    for (const iteration of wanted) {
      const bytes = rows.get(iteration.hash);
      if (bytes !== undefined) this.#prefetched.set(iteration, bytes);
    }
  }

  /**
   * The encoded notification for an iteration, or `null` when its path is filtered.
   * Content the CAS cannot read is left out of the notification (the replica then asks
   * for it and is told it is not found), and the problem is logged.
   */
  async frame(iteration: Iteration): Promise<Uint8Array | null> {
    if (this.#filtered(iteration)) return null;
    let inline: Uint8Array | null = null;
    if (!iteration.deleted && iteration.hash === EMPTY_HASH) {
      // No content (a folder, an empty file): nothing to read, nor to hash.
      inline = NO_BYTES;
    } else if (this.#inlined(iteration)) {
      inline = this.#prefetched.get(iteration) ?? null;
      if (inline !== null) {
        this.#prefetched.delete(iteration);
        return encodeFrame(notificationFor(iteration, inline));
      }
      try {
        // One lookup, size and bytes at once; a size noted by a capture racing its writer
        // can be stale, so the stored size decides. Not stored whole here (only in the
        // tier, say): read as any content is.
        const whole = await this.#cas.readWholeWithin(iteration.hash, INLINE_LIMIT - 1);
        if (whole === null) {
          inline = await this.#cas.readBytes(iteration.hash);
          if (inline.length >= INLINE_LIMIT) inline = null;
        } else if (whole instanceof Uint8Array) {
          inline = whole;
        }
      } catch (error) {
        log("warn", "cannot read content for a notification", {
          path: iteration.path,
          hash: iteration.hash,
          error,
        });
      }
    }
    return encodeFrame(notificationFor(iteration, inline));
  }
}
