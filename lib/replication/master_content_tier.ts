import { ContentNotFoundError, type ContentTier, CorruptContentError } from "../cas/mod.ts";
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
   * @param why Why it could not be read through the master.
   */
  constructor(hash: string, why = "this replica is not connected to it") {
    super(hash);
    this.message = `Content "${hash}" is held by the master, and ${why}: read it once ` +
      "the replica is connected again, or on the master";
    this.name = "HeldByMasterError";
  }
}

/**
 * How long a read through the master whose connection ended waits for the next one, each
 * time: a replica reconnects by itself, at once after a cut.
 */
const RECONNECT_WAIT_MS = 30_000;
/** How long a read through the master goes on across connections that end, at most. */
const READ_DEADLINE_MS = 10 * 60_000;

/**
 * A sandbox replica's CAS reads what it lacks through the master (PROTOCOL.md §2): the
 * content of versions the replica wrote to its workspace without keeping a copy, when a
 * history read, a diff or a restore asks for it. Each read is a `ContentFetchRequest` on
 * the connection open at the time; the CAS verifies what comes back and keeps it. Without
 * a connection, a read fails with {@linkcode HeldByMasterError}. A read whose connection
 * ends is asked again on the next one (waiting {@linkcode RECONNECT_WAIT_MS} for it each
 * time), in ranges (PROTOCOL.md §4): on a link that drops often, each connection adds
 * what it carried. A read gives up after {@linkcode READ_DEADLINE_MS}, or when the replica
 * closes.
 */
export class MasterContentTier implements ContentTier {
  #fetcher: ContentFetcher | null = null;
  /** Manifests the master answered to an object request, for the `getManifest` that follows. */
  readonly #manifests = new Map<string, string>();
  /** Reads whose connection ended, waiting for the next one (`null`: none within the wait). */
  #waiting: ((fetcher: ContentFetcher | null) => void)[] = [];
  #closed = false;

  /** Reads go through this connection's fetcher from now on. */
  attach(fetcher: ContentFetcher): void {
    if (this.#closed) return;
    this.#fetcher = fetcher;
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const wake of waiting) wake(fetcher);
  }

  /** The connection `fetcher` belongs to ended: reads fail until another is attached. */
  detach(fetcher: ContentFetcher): void {
    if (this.#fetcher === fetcher) this.#fetcher = null;
    this.#manifests.clear();
  }

  /** The replica closed: reads waiting for a connection fail, and so do later ones. */
  close(): void {
    this.#closed = true;
    this.#fetcher = null;
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const wake of waiting) wake(null);
  }

  /**
   * The content whole, as the master answers it.
   *
   * @returns `null` when the master lacks it, or holds it in chunks (then answered by
   * {@linkcode MasterContentTier.getManifest}).
   * @throws {HeldByMasterError} When no connection is open.
   */
  async getObject(hash: string): Promise<Uint8Array | null> {
    const answer = await this.#ask(hash);
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
      const answer = await this.#ask(hash);
      if (answer.type === "ContentNotFound" || answer.chunk_manifest === null) return null;
      text = answer.chunk_manifest;
    }
    try {
      return JSON.parse(text);
    } catch {
      return "not JSON"; // the CAS refuses it as an invalid manifest
    }
  }

  /**
   * The master's answer for `hash` on the connection open now, asked again on the next
   * connection each time the one it was asked on fails first.
   *
   * @throws {HeldByMasterError} When no connection is open, none came within
   * {@linkcode RECONNECT_WAIT_MS} of the last one's end, or the read went on for
   * {@linkcode READ_DEADLINE_MS}.
   */
  async #ask(hash: string): ReturnType<ContentFetcher["ask"]> {
    const deadline = Date.now() + READ_DEADLINE_MS;
    let fetcher = this.#fetcher;
    while (fetcher !== null && Date.now() < deadline) {
      try {
        return await fetcher.ask(hash);
      } catch (error) {
        // What arrived does not fit what was asked: no new connection changes that.
        if (error instanceof CorruptContentError) throw error;
      }
      // Else the connection failed (its send, or its end): the next one is asked.
      const next = this.#fetcher;
      fetcher = next !== null && next !== fetcher
        ? next
        : this.#closed
        ? null
        : await this.#nextConnection();
    }
    if (fetcher === null) throw new HeldByMasterError(hash);
    throw new HeldByMasterError(
      hash,
      `its connections to it kept ending for ${READ_DEADLINE_MS / 60_000} minutes of reading it`,
    );
  }

  /** The fetcher of the next connection, or `null` when none comes within the wait. */
  #nextConnection(): Promise<ContentFetcher | null> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#waiting = this.#waiting.filter((wake) => wake !== settle);
        resolve(null);
      }, RECONNECT_WAIT_MS);
      const settle = (fetcher: ContentFetcher | null) => {
        clearTimeout(timer);
        resolve(fetcher);
      };
      this.#waiting.push(settle);
    });
  }
}
