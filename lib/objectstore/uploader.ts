import type { DatabaseSync } from "node:sqlite";
import type { Cas } from "../cas/mod.ts";
import { referencedHashes } from "../checkpoint/mod.ts";
import { forEachLimited } from "../concurrency/mod.ts";
import { columns, migrate } from "../db/mod.ts";
import { errorMessage } from "../log/mod.ts";
import type { S3Client } from "./s3_client.ts";
import { sendContent, type SentContent } from "./send_content.ts";

/** Options for {@linkcode Uploader}. */
export interface UploaderOptions {
  /** Chronicle's database: what it references is what must reach the bucket. */
  db: DatabaseSync;
  /** The local store the bytes are read from. */
  cas: Cas;
  /** The bucket. */
  client: S3Client;
  /** Key prefix (`""` or ending in `/`). */
  prefix: string;
  /** Uploads at once. @default {8} */
  concurrency?: number;
  /** First wait after a failed upload; it doubles per failure. @default {500} */
  retryBaseMs?: number;
  /** Longest wait between tries. @default {60000} */
  retryMaxMs?: number;
  /** How often the database is swept for content not yet uploaded. @default {30000} */
  sweepIntervalMs?: number;
}

/** The uploader's state, for `status` and `/metrics`. */
export interface UploaderStatus {
  /** Contents waiting to be uploaded. */
  queuedObjects: number;
  /** Their bytes, as stored locally. */
  queuedBytes: number;
  /** Contents uploaded since the process started. */
  uploadedObjects: number;
  /** Bytes sent since the process started. */
  uploadedBytes: number;
  /** Objects found in the bucket already (another instance sent them). */
  alreadyThere: number;
  /** Failed tries since the process started. */
  failures: number;
  /** The last failure, or `null`. */
  lastError: string | null;
  /** Bytes per second over the last pass that sent anything. */
  bytesPerSecond: number;
  /** True while the last try failed: local work goes on, the queue waits. */
  degraded: boolean;
}

const MIGRATIONS = [
  `CREATE TABLE objectstore_uploaded (
     hash TEXT PRIMARY KEY,
     uploaded_at INTEGER NOT NULL
   ) WITHOUT ROWID`,
];

/**
 * Write-behind to the bucket. Content is durable locally first; this sends what the
 * database references and the bucket lacks, in the background, a bounded number at once,
 * retrying with capped backoff. The queue is not a list that a crash could lose: it is
 * the referenced content (`CONTENT_REFERENCES`) minus the table `objectstore_uploaded`,
 * which an upload joins only once the bucket holds it, so after a `kill -9` the next
 * start sends exactly what is missing. Objects are keyed by hash: one already in the
 * bucket is never sent again nor overwritten.
 */
export class Uploader {
  readonly #db: DatabaseSync;
  readonly #cas: Cas;
  readonly #client: S3Client;
  readonly #prefix: string;
  readonly #concurrency: number;
  readonly #retryBaseMs: number;
  readonly #retryMaxMs: number;
  readonly #sweepIntervalMs: number;
  readonly #uploaded: Set<string>;
  /** Hashes waiting, with their size once known. */
  #queue = new Map<string, number>();
  #attempts = 0;
  #running: Promise<void> | null = null;
  #stopped = false;
  #wake: (() => void) | null = null;
  #lastSweepAt = -Infinity;
  readonly #status: Omit<UploaderStatus, "queuedObjects" | "queuedBytes"> = {
    uploadedObjects: 0,
    uploadedBytes: 0,
    alreadyThere: 0,
    failures: 0,
    lastError: null,
    bytesPerSecond: 0,
    degraded: false,
  };

  /**
   * Prepares the uploader and its table; nothing is sent before {@linkcode Uploader.start}
   * or {@linkcode Uploader.syncOnce}.
   *
   * @param options The database, the local store, the bucket and the pace.
   */
  constructor(options: UploaderOptions) {
    this.#db = options.db;
    this.#cas = options.cas;
    this.#client = options.client;
    this.#prefix = options.prefix;
    this.#concurrency = options.concurrency ?? 8;
    this.#retryBaseMs = options.retryBaseMs ?? 500;
    this.#retryMaxMs = options.retryMaxMs ?? 60_000;
    this.#sweepIntervalMs = options.sweepIntervalMs ?? 30_000;
    migrate(this.#db, "objectstore", MIGRATIONS);
    this.#uploaded = uploadedIn(this.#db);
  }

  /** Finds what the database references that the bucket may lack, and queues it. */
  #sweep(): void {
    const missing = referencedHashes(this.#db).filter((hash) =>
      !this.#uploaded.has(hash) && !this.#queue.has(hash)
    );
    if (missing.length === 0) return;
    // Sizes as the history knows them, for the queue's byte count.
    const sizes = new Map<string, number>();
    for (
      const row of this.#db.prepare("SELECT hash, MAX(size) AS size FROM iterations GROUP BY hash")
        .all()
    ) {
      const read = columns(row);
      sizes.set(read.text("hash"), read.integer("size"));
    }
    for (const hash of missing) this.#queue.set(hash, sizes.get(hash) ?? 0);
  }

  /**
   * Queues newly recorded content at once, without waiting for the next sweep.
   *
   * @param contents Content hashes with their sizes (a deletion's `""` is skipped).
   */
  notice(contents: Iterable<{ hash: string; size: number }>): void {
    let added = false;
    for (const { hash, size } of contents) {
      if (hash === "" || this.#uploaded.has(hash) || this.#queue.has(hash)) continue;
      this.#queue.set(hash, size);
      added = true;
    }
    if (added) this.#wake?.();
  }

  /**
   * One pass: sweeps the database, then tries every queued content once.
   *
   * @returns How many contents reached the bucket in this pass.
   */
  syncOnce(): Promise<number> {
    return this.#pass(true);
  }

  /**
   * Tries every queued content once, after a sweep of the database when `sweep`.
   *
   * @param sweep Whether to look for content not yet queued: a sweep reads every reference
   * of the history, too much to repeat for each batch {@linkcode Uploader.notice} queues.
   * @returns How many contents reached the bucket.
   */
  async #pass(sweep: boolean): Promise<number> {
    if (sweep) {
      this.#sweep();
      this.#lastSweepAt = performance.now();
    }
    const batch = [...this.#queue.keys()];
    const start = performance.now();
    let sent = 0;
    let bytes = 0;
    let failedThisPass = false;
    // Each failure is counted and the pass goes on: one bad content does not hold back the rest.
    await forEachLimited(batch, this.#concurrency, async (hash) => {
      if (this.#stopped) return;
      try {
        const { bytes: sentBytes, chunks } = await this.#uploadContent(hash);
        bytes += sentBytes;
        this.#markUploaded(hash, chunks);
        sent++;
      } catch (error) {
        failedThisPass = true;
        this.#status.failures++;
        this.#status.lastError = errorMessage(error);
      }
    });
    const seconds = (performance.now() - start) / 1000;
    if (bytes > 0 && seconds > 0) this.#status.bytesPerSecond = bytes / seconds;
    this.#status.degraded = failedThisPass;
    this.#attempts = failedThisPass ? this.#attempts + 1 : 0;
    return sent;
  }

  /** Notes a content (and a large one's chunks) as safe in the bucket. */
  #markUploaded(hash: string, chunks: string[]): void {
    const insert = this.#db.prepare(
      "INSERT OR IGNORE INTO objectstore_uploaded (hash, uploaded_at) VALUES (?, ?)",
    );
    const now = Date.now();
    for (const safe of [...chunks, hash]) {
      insert.run(safe, now);
      this.#uploaded.add(safe);
    }
    this.#queue.delete(hash);
    this.#status.uploadedObjects++;
  }

  async #uploadContent(hash: string): Promise<SentContent> {
    const sent = await sendContent(this.#cas, this.#client, this.#prefix, hash);
    this.#status.alreadyThere += sent.alreadyThere;
    this.#status.uploadedBytes += sent.bytes;
    return sent;
  }

  /**
   * Whether an object (a content or a chunk) is known to be in the bucket, so the local
   * copy may be evicted.
   *
   * @param hash The object's hash.
   * @returns `true` once its upload (or its finding there) was recorded.
   */
  isUploaded(hash: string): boolean {
    return this.#uploaded.has(hash);
  }

  /** The last failure while the last pass failed, else `null`. */
  get failing(): string | null {
    return this.#status.degraded ? this.#status.lastError ?? "failing" : null;
  }

  /** Starts the background loop: passes until stopped, waiting between them. */
  start(): void {
    if (this.#running !== null) return;
    this.#running = (async () => {
      let sweep = true;
      while (!this.#stopped) {
        await this.#pass(sweep);
        if (this.#stopped) break;
        const wait = this.#attempts > 0
          ? Math.min(this.#retryMaxMs, this.#retryBaseMs * 2 ** (this.#attempts - 1))
          : this.#queue.size > 0
          ? 0
          : this.#sweepIntervalMs;
        const woken = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), wait);
          // New content wakes an idle loop; a failing one keeps its backoff.
          this.#wake = this.#attempts > 0 ? null : () => {
            clearTimeout(timer);
            resolve(true);
          };
        });
        this.#wake = null;
        // A pass woken by noticed content sends that content; the database is swept again
        // after a failure, when the idle wait ran out, or once the interval has passed.
        sweep = this.#attempts > 0 || (!woken && wait === this.#sweepIntervalMs) ||
          performance.now() - this.#lastSweepAt >= this.#sweepIntervalMs;
      }
    })();
  }

  /** Stops the loop after the uploads under way; what is queued stays queued (durably). */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake?.();
    await this.#running;
  }

  /**
   * The queue and the counters.
   *
   * @returns A copy; queued bytes count the sizes the history records.
   */
  status(): UploaderStatus {
    let queuedBytes = 0;
    for (const size of this.#queue.values()) queuedBytes += size;
    return { queuedObjects: this.#queue.size, queuedBytes, ...this.#status };
  }
}

/**
 * The objects a database's uploader recorded as safe in the bucket (none without its table).
 *
 * @param db Chronicle's database, or a checkpoint's copy of it.
 * @returns Their hashes.
 */
export function uploadedIn(db: DatabaseSync): Set<string> {
  const table = db.prepare(
    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'objectstore_uploaded'",
  ).get();
  if (table === undefined) return new Set();
  return new Set(
    db.prepare("SELECT hash FROM objectstore_uploaded").all().map((row) =>
      columns(row).text("hash")
    ),
  );
}
