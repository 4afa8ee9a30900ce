import { ContentNotFoundError, type ContentTier } from "../cas/mod.ts";
import type { ContentFetcher } from "./content_fetcher.ts";

/**
 * Content a sandbox replica wrote to its workspace from the master and keeps no copy of
 * (see `ReplicaCoreOptions.keepMasterContent`), read while no connection to the master is
 * open: the message says where it is.
 */
export class HeldByMasterError extends ContentNotFoundError {
  /**
   * Makes the error for content read while disconnected.
   *
   * @param hash The content asked for.
   */
  constructor(hash: string) {
    super(hash);
    this.message = `Content "${hash}" is held by the master, and this replica is not ` +
      "connected to it: read it once the replica is connected again, or on the master";
    this.name = "HeldByMasterError";
  }
}

/**
 * A sandbox replica's CAS reads what it lacks through the master (PROTOCOL.md §2): the
 * content of versions the replica wrote to its workspace without keeping a copy, when a
 * history read, a diff or a restore asks for it. Each read is one `ContentFetchRequest`
 * on the connection open at the time; the CAS verifies what comes back and keeps it.
 * Without a connection, a read fails with {@linkcode HeldByMasterError}.
 */
export class MasterContentTier implements ContentTier {
  #fetcher: ContentFetcher | null = null;
  /** Manifests the master answered to an object request, for the `getManifest` that follows. */
  readonly #manifests = new Map<string, string>();

  /** Reads go through this connection's fetcher from now on. */
  attach(fetcher: ContentFetcher): void {
    this.#fetcher = fetcher;
  }

  /** The connection `fetcher` belongs to ended: reads fail until another is attached. */
  detach(fetcher: ContentFetcher): void {
    if (this.#fetcher === fetcher) this.#fetcher = null;
    this.#manifests.clear();
  }

  /**
   * The content whole, as the master answers it.
   *
   * @returns `null` when the master lacks it, or holds it in chunks (then answered by
   * {@linkcode MasterContentTier.getManifest}).
   * @throws {HeldByMasterError} When no connection is open.
   */
  async getObject(hash: string): Promise<Uint8Array | null> {
    const answer = await this.#connected(hash).ask(hash);
    if (answer.type === "ContentNotFound") return null;
    if (answer.chunk_manifest === null) return answer.content;
    this.#manifests.set(hash, answer.chunk_manifest);
    return null;
  }

  /**
   * The chunk manifest of a content the master holds in chunks (unchecked: the CAS
   * checks it against its chunks).
   *
   * @returns `null` when the master lacks it or holds it whole.
   * @throws {HeldByMasterError} When no connection is open.
   */
  async getManifest(hash: string): Promise<unknown> {
    let text = this.#manifests.get(hash);
    this.#manifests.delete(hash);
    if (text === undefined) {
      const answer = await this.#connected(hash).ask(hash);
      if (answer.type === "ContentNotFound" || answer.chunk_manifest === null) return null;
      text = answer.chunk_manifest;
    }
    try {
      return JSON.parse(text);
    } catch {
      return "not JSON"; // the CAS refuses it as an invalid manifest
    }
  }

  #connected(hash: string): ContentFetcher {
    if (this.#fetcher === null) throw new HeldByMasterError(hash);
    return this.#fetcher;
  }
}
