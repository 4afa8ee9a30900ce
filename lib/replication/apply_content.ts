import { CorruptContentError } from "../cas/mod.ts";
import { log } from "../log/mod.ts";
import { fetchedIntoMemory, type PendingVersion } from "./apply_batch.ts";
import { type ContentFetcher, ContentUnavailableError } from "./content_fetcher.ts";
import type { ReplicaCore } from "./replica_core.ts";
import { TransportClosedError } from "./transports/mod.ts";

/** What {@linkcode VersionContent} needs of the apply pipeline and its connection. */
export interface VersionContentContext {
  /** The replica. */
  core: ReplicaCore;
  /** The connection's content fetcher. */
  fetcher: ContentFetcher;
  /** Whether the connection is ending. */
  closing(): boolean;
  /** Takes a version whose content was being fetched when the connection ended. */
  lost(item: PendingVersion): void;
}

/**
 * Gets the content of the master versions a replica applies: into memory, or into the
 * CAS. A fetch lost with its connection hands the version to `lost` (carried to the next
 * connection); content the master lacks, or that keeps arriving corrupt, is noted as the
 * path's problem. Internal to the apply pipeline (`VersionApplier`).
 */
export class VersionContent {
  readonly #c: VersionContentContext;

  /** @param context See {@linkcode VersionContentContext}. */
  constructor(context: VersionContentContext) {
    this.#c = context;
  }

  /**
   * The bytes a version's content takes in memory when written ({@linkcode
   * VersionContent.forWrite}): 0 where it is put in the CAS instead (see
   * `fetchedIntoMemory`).
   */
  inMemory(item: PendingVersion & { action?: string }): number {
    return fetchedIntoMemory(item, this.#c.core.keepsMasterContent);
  }

  /**
   * The content of a version to write, without inline bytes (or with bytes that did not
   * match): fetched into memory, verified, where {@linkcode VersionContent.inMemory} says
   * so (`inline`: the bytes); else put in the CAS (`inline: null`). `null` when unavailable.
   */
  async forWrite(item: PendingVersion): Promise<{ inline: Uint8Array | null } | null> {
    const fetch = { ...item, inline: null };
    if (this.inMemory(fetch) === 0) return await this.hold(fetch) ? { inline: null } : null;
    try {
      return { inline: await this.#c.fetcher.fetchBytes(item.version.hash, item.size!) };
    } catch (error) {
      return this.#unavailable(fetch, error);
    }
  }

  /** Puts the content in the CAS (inline bytes verified, else fetched); `false` when unavailable. */
  async hold(item: PendingVersion): Promise<boolean> {
    const { path, version: { hash }, inline } = item;
    if (inline !== null) {
      try {
        await this.#c.core.cas.putVerified(hash, inline, { deferSync: true });
        return true;
      } catch (error) {
        if (!(error instanceof CorruptContentError)) throw error;
        log("warn", "inline content does not match its hash; fetching it", { path, hash });
      }
    }
    try {
      await this.#c.fetcher.need(hash, item.size);
      return true;
    } catch (error) {
      return this.#unavailable(item, error) ?? false;
    }
  }

  /**
   * A fetch of `item`'s content failed: the version is carried to the next connection
   * when this one ended, or noted as a problem when the master lacks the content or it
   * keeps arriving corrupt; `null` either way.
   *
   * @throws Any other error.
   */
  #unavailable(item: PendingVersion, error: unknown): null {
    if (this.#c.closing() || error instanceof TransportClosedError) {
      // Not this content's fault: the version waits for the next connection.
      this.#c.lost(item);
      return null;
    }
    if (error instanceof ContentUnavailableError || error instanceof CorruptContentError) {
      this.#c.core.noteProblem(item.path, error.message);
      return null;
    }
    throw error;
  }
}
