import { sharedWork, TaskLimiter } from "../concurrency/mod.ts";
import { metrics } from "../metrics/mod.ts";
import {
  assertBytesHash,
  type Cas,
  CHUNK_MIN_SIZE,
  CHUNKING_THRESHOLD,
  type ChunkManifest,
  CorruptContentError,
  isContentHash,
  manifestProblem,
} from "../cas/mod.ts";
import type {
  ContentFetchResponseMessage,
  ContentNotFoundMessage,
  WireMessage,
} from "../wire/mod.ts";
import { rangeKey } from "./content_range.ts";
import type { LostFetch, PartialContents } from "./partial_contents.ts";
import { RangeFetches } from "./range_fetches.ts";

/** The master does not hold content a replica asked for. */
export class ContentUnavailableError extends Error {
  /** The content hash asked for. */
  readonly hash: string;

  /** @param hash The missing content's hash. */
  constructor(hash: string) {
    super(`The master does not hold content "${hash}"`);
    this.name = "ContentUnavailableError";
    this.hash = hash;
  }
}

/** Options for {@linkcode ContentFetcher}. */
export interface ContentFetcherOptions {
  /** The replica's CAS, where fetched content is stored once verified. */
  cas: Cas;
  /** Sends a request to the master. */
  send: (message: WireMessage) => Promise<void>;
  /** Requests in flight at once (whole contents and chunks alike). @default {64} */
  concurrency?: number;
  /**
   * Bytes expected in flight at once (from the sizes notifications and manifests give); a
   * larger request is sent alone. A bound on what is asked for, not on what arrives: the
   * master's answers are only bounded by the largest frame. @default {8388608}
   */
  budgetBytes?: number;
  /** Attempts per content or chunk whose bytes arrive corrupt. @default {3} */
  attempts?: number;
  /**
   * The replica's contents fetched in ranges, kept across its connections: a whole fetch
   * this connection's end cuts short is noted there, and fetched in ranges by the next.
   * Without it every content is fetched whole.
   */
  partials?: PartialContents;
}

type Answer = ContentFetchResponseMessage | ContentNotFoundMessage;

/** What a fetch asks for (see `ContentFetcher.#fetchVerified`). */
interface Wanted {
  answerBytes: number;
  size: number | undefined;
  whole: boolean;
}

/**
 * Fetches content a replica lacks from the master, over one connection: one
 * `ContentFetchRequest` per hash at a time, answers matched by hash, chunked content
 * assembled from its manifest with the missing chunks fetched in parallel. Every piece
 * is verified against its hash by the CAS before it is stored; corrupt bytes are
 * discarded and fetched again (PROTOCOL.md §2). Nothing unverified is ever kept.
 */
export class ContentFetcher {
  readonly #cas: Cas;
  readonly #send: (message: WireMessage) => Promise<void>;
  readonly #attempts: number;
  readonly #waiting = new Map<
    string,
    { resolve: (a: Answer) => void; reject: (e: unknown) => void }[]
  >();
  readonly #ensuring = new Map<string, Promise<void>>();
  readonly #fetchingBytes = new Map<string, Promise<Uint8Array | null>>();
  readonly #limiter: TaskLimiter;
  readonly #partials: PartialContents | undefined;
  readonly #ranges: RangeFetches | undefined;
  /** Requests sent and not answered, to note as lost if the connection ends. */
  readonly #sent = new Map<string, LostFetch>();
  #failed: unknown = null;
  #needed = 0;

  /** @param options See {@linkcode ContentFetcherOptions}. */
  constructor(options: ContentFetcherOptions) {
    this.#cas = options.cas;
    this.#send = options.send;
    this.#limiter = new TaskLimiter(
      options.concurrency ?? 64,
      options.budgetBytes ?? 8 * 1024 * 1024,
    );
    this.#attempts = options.attempts ?? 3;
    this.#partials = options.partials;
    this.#ranges = options.partials &&
      new RangeFetches(options.partials, (range) =>
        this.#request(rangeKey(range), range.length, {
          hash: range.hash,
          bytes: range.length,
          range: true,
        }));
  }

  /** Requests sent and not answered yet, or waiting for a slot. */
  get inFlight(): number {
    return this.#limiter.pending;
  }

  /**
   * Calls to {@linkcode ContentFetcher.need} not settled yet: someone is blocked on an
   * answer, so the connection must keep being read even when reading is paused otherwise.
   */
  get needed(): number {
    return this.#needed;
  }

  /**
   * Like {@linkcode ContentFetcher.ensure}, for a caller that cannot go on without the
   * content (the applier), counted in {@linkcode ContentFetcher.needed} until it settles.
   * A prefetch uses `ensure`: its answer may wait while reading is paused.
   *
   * @param hash The content hash.
   * @param size The content's size when known.
   * @throws As {@linkcode ContentFetcher.ensure} does.
   */
  async need(hash: string, size?: number): Promise<void> {
    this.#needed++;
    try {
      await this.ensure(hash, size);
    } finally {
      this.#needed--;
    }
  }

  /**
   * Makes sure the CAS holds `hash`, fetching what is missing. Concurrent calls for one
   * hash share the work.
   *
   * @param hash The content hash.
   * @param size The content's size when known (a notification gives it), to keep the
   * bytes in flight within the budget; unknown counts as {@linkcode CHUNKING_THRESHOLD}.
   * @throws {ContentUnavailableError} When the master does not hold it.
   * @throws {CorruptContentError} When it kept arriving corrupt.
   * @throws {TransportClosedError} When the connection closed meanwhile.
   */
  ensure(hash: string, size?: number): Promise<void> {
    return sharedWork(this.#ensuring, hash, () => this.#ensure(hash, size));
  }

  /**
   * Fetches a content into memory, verified, without storing it: for a replica that writes
   * it to its workspace and keeps no copy of its own (the master holds it). Counted in
   * {@linkcode ContentFetcher.needed} until it settles; concurrent calls for one hash
   * share the fetch.
   *
   * @param hash The content hash.
   * @param size Its size, from its notification: content under
   * {@linkcode CHUNKING_THRESHOLD} is answered whole.
   * @returns The bytes; `null` when the master answered with a chunk manifest after all
   * (the content is then stored in the CAS, as {@linkcode ContentFetcher.need} stores it).
   * @throws As {@linkcode ContentFetcher.ensure} does.
   */
  async fetchBytes(hash: string, size: number): Promise<Uint8Array | null> {
    this.#needed++;
    try {
      return await sharedWork(this.#fetchingBytes, hash, () => this.#fetchBytes(hash, size));
    } finally {
      this.#needed--;
    }
  }

  /**
   * Asks the master for `hash` and hands its answer over unverified: for a read of content
   * through the master (see `MasterContentTier`, whose caller, the CAS, verifies what it is
   * given). Asked for whole, or in ranges once a connection's end cut short a read of it,
   * as for any fetch (see `PartialContents`); a content the master holds in chunks is
   * answered with its manifest either way. Counted in {@linkcode ContentFetcher.needed}
   * until answered.
   *
   * @returns The answer: the content whole, its chunk manifest, or that the master lacks it.
   * @throws {TransportClosedError} When the connection closed meanwhile.
   * @throws {CorruptContentError} When its ranges' answers do not fit what was asked (what
   * was received of it is dropped: the next read asks for it whole).
   */
  async ask(hash: string): Promise<ContentFetchResponseMessage | ContentNotFoundMessage> {
    this.#needed++;
    try {
      return await this.#answer(hash, {
        answerBytes: CHUNKING_THRESHOLD,
        size: undefined,
        whole: true,
      });
    } catch (error) {
      if (error instanceof CorruptContentError) this.#partials?.forget(hash);
      throw error;
    } finally {
      this.#needed--;
    }
  }

  /** Hands an answer from the master to whoever asked for it. */
  onAnswer(answer: Answer): void {
    const waiters = this.#waiting.get(answer.content_hash);
    if (!waiters) return; // an answer nobody waits for (asked by an earlier connection)
    this.#waiting.delete(answer.content_hash);
    for (const waiter of waiters) waiter.resolve(answer);
  }

  /**
   * Fails every request in flight and every later one (the connection is gone); those
   * sent and not answered are noted as lost (see `PartialContents.connectionEnded`).
   */
  fail(error: unknown): void {
    if (this.#failed === null) this.#partials?.connectionEnded([...this.#sent.values()]);
    this.#sent.clear();
    this.#failed = error;
    const waiting = [...this.#waiting.values()].flat();
    this.#waiting.clear();
    for (const waiter of waiting) waiter.reject(error);
  }

  async #ensure(hash: string, size: number | undefined): Promise<void> {
    if (!isContentHash(hash)) throw new CorruptContentError(hash, null, "not a content hash");
    // Content under the chunking threshold is never stored as a manifest: only its whole
    // object is looked for (no look for a manifest file). A size that lies costs at most a
    // fetch of content held already; what arrives is verified either way.
    const small = size !== undefined && size < CHUNKING_THRESHOLD;
    if (await (small ? this.#cas.hasObject(hash) : this.#cas.has(hash))) return;
    await this.#fetch(hash, size, (bytes) => this.#putFetched(hash, bytes));
  }

  async #fetchBytes(hash: string, size: number): Promise<Uint8Array | null> {
    if (!isContentHash(hash)) throw new CorruptContentError(hash, null, "not a content hash");
    let held: Uint8Array | null = null;
    await this.#fetch(hash, size, (bytes) => {
      assertBytesHash(hash, bytes);
      held = bytes;
      return Promise.resolve();
    });
    return held;
  }

  /**
   * Fetches `hash`, timed: content answered whole goes to `whole` (which verifies it), a
   * chunk manifest is assembled into the CAS.
   */
  async #fetch(
    hash: string,
    size: number | undefined,
    whole: (bytes: Uint8Array) => Promise<void>,
  ): Promise<void> {
    const fetched = metrics.fetchLatency.startTimer();
    // Content of 4 MiB and more is answered with its manifest: never asked for in ranges.
    const stored = size === undefined || size < CHUNKING_THRESHOLD;
    const want = { answerBytes: answerSize(size), size: stored ? size : undefined, whole: stored };
    await this.#fetchVerified(hash, want, async (answer) => {
      if (answer.chunk_manifest === null) await whole(answer.content);
      else await this.#assemble(hash, parseManifest(hash, answer.chunk_manifest));
    });
    fetched();
  }

  async #assemble(hash: string, manifest: ChunkManifest): Promise<void> {
    const missing = await this.#cas.missingChunks(manifest);
    await Promise.all(
      missing.map((chunk) =>
        this.#fetchVerified(
          chunk.hash,
          { answerBytes: chunk.size, size: chunk.size, whole: true },
          (answer) => this.#putFetched(chunk.hash, answer.content),
        )
      ),
    );
    await this.#cas.putManifest(hash, manifest);
  }

  /**
   * Asks for `hash` and stores the answer, asking again while it arrives corrupt.
   *
   * @param want The bytes its answer is counted as; the content's size when known; and
   * whether it is stored whole (not chunked) as far as is known, so ranges may fetch it.
   */
  async #fetchVerified(
    hash: string,
    want: Wanted,
    store: (answer: ContentFetchResponseMessage) => Promise<void>,
  ): Promise<void> {
    for (let attempt = 1;; attempt++) {
      try {
        const answer = await this.#answer(hash, want);
        if (answer.type === "ContentNotFound") throw new ContentUnavailableError(hash);
        await store(answer);
        this.#partials?.forget(hash);
        return;
      } catch (error) {
        // What was received in ranges is dropped: the next attempt fetches it whole.
        if (error instanceof CorruptContentError) this.#partials?.forget(hash);
        if (!(error instanceof CorruptContentError) || attempt >= this.#attempts) throw error;
      }
    }
  }

  /**
   * The master's answer for `hash`: asked for whole, or assembled from ranges when a past
   * connection lost its whole fetch (see `PartialContents`), unverified either way.
   */
  async #answer(hash: string, want: Wanted): Promise<Answer> {
    if (want.whole && this.#ranges?.wants(hash, want.size)) {
      const content = await this.#ranges.fetch(hash);
      if (content !== null) {
        return {
          type: "ContentFetchResponse",
          content_hash: hash,
          content,
          size: BigInt(content.length),
          chunk_manifest: null,
        };
      }
    }
    // Noted as lost if the connection ends before its answer: in ranges next time.
    const size = want.size === undefined ? {} : { size: want.size };
    const lost = want.whole ? { hash, bytes: want.answerBytes, ...size } : undefined;
    return await this.#request(hash, want.answerBytes, lost);
  }

  /**
   * Stores fetched bytes; flushed with the folders of the batch that records them. Kept
   * in memory a while too: the applier writes them to the workspace next.
   */
  #putFetched(hash: string, bytes: Uint8Array): Promise<void> {
    return this.#cas.putVerified(hash, bytes, { deferSync: true, readSoon: true });
  }

  /**
   * One request for `key` (a content hash or a range key), within the limits; one
   * outstanding per key.
   *
   * @param lost What to note when the connection's end cuts the request short (see
   * `PartialContents.connectionEnded`); nothing when not given.
   */
  #request(key: string, answerBytes: number, lost?: LostFetch): Promise<Answer> {
    return this.#limiter.run(async () => {
      if (this.#failed) throw this.#failed;
      const answer = new Promise<Answer>((resolve, reject) => {
        const waiters = this.#waiting.get(key);
        if (waiters) waiters.push({ resolve, reject });
        else this.#waiting.set(key, [{ resolve, reject }]);
      });
      answer.catch(() => {}); // when sending fails, fail() rejects it with nobody awaiting
      let sent: LostFetch | undefined;
      if (this.#waiting.get(key)!.length === 1) {
        sent = lost;
        if (sent) this.#sent.set(key, sent);
        await this.#send({ type: "ContentFetchRequest", content_hash: key });
      }
      try {
        return await answer;
      } finally {
        if (sent && this.#sent.get(key) === sent) this.#sent.delete(key);
      }
    }, answerBytes);
  }
}

/**
 * What the answer for content this large is counted as: it is stored in chunks, and
 * answered with their manifest, about a hundred bytes of JSON per chunk at most.
 */
function manifestBytes(size: number): number {
  return 1024 + Math.ceil(size / CHUNK_MIN_SIZE) * 128;
}

function parseManifest(hash: string, text: string): ChunkManifest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CorruptContentError(hash, null, `manifest is not JSON (${(error as Error).message})`);
  }
  const problem = manifestProblem(value);
  if (problem !== null) throw new CorruptContentError(hash, null, `invalid manifest: ${problem}`);
  return value as ChunkManifest;
}

/**
 * The bytes the answer for a content of `size` takes: its manifest when it is chunked;
 * unknown, as much as content answered whole can be.
 */
function answerSize(size: number | undefined): number {
  if (size === undefined) return CHUNKING_THRESHOLD;
  return size >= CHUNKING_THRESHOLD ? manifestBytes(size) : size;
}
