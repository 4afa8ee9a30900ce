import type { DatabaseSync } from "node:sqlite";
import type { Cas } from "../cas/mod.ts";
import { log } from "../log/mod.ts";
import { type BucketCheckpointResult, checkpointToBucket } from "./bucket_checkpoint.ts";
import { ObjectTier, type ObjectTierStats } from "./object_tier.ts";
import { S3Client, type S3Credentials } from "./s3_client.ts";
import { formatS3Location, parseS3Location } from "./s3_location.ts";
import { Uploader, type UploaderStatus } from "./uploader.ts";

/** Where the bucket is and how to reach it. */
export interface ObjectStoreSettings {
  /** `s3://BUCKET/PREFIX`. */
  location: string;
  /** The service's URL, for S3-compatible services. */
  endpoint?: string | undefined;
  /** Region for signing. @default {"us-east-1"} */
  region?: string | undefined;
  /** Path-style addressing. @default {true with an endpoint} */
  pathStyle?: boolean | undefined;
  /** The environment holding `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`. */
  env: Record<string, string | undefined>;
}

/** A client and the key prefix for a location. */
export interface OpenedBucket {
  /** The bucket's client. */
  client: S3Client;
  /** Key prefix (`""` or ending in `/`). */
  prefix: string;
}

/**
 * Reads a location and the credentials from the environment, and makes the client.
 *
 * @param settings The location, endpoint, region, addressing and environment.
 * @returns The client and the prefix.
 * @throws {TypeError} For a malformed location or endpoint, or missing credentials.
 */
export function openBucket(settings: ObjectStoreSettings): OpenedBucket {
  const { bucket, prefix } = parseS3Location(settings.location);
  const credentials: S3Credentials = {
    accessKeyId: settings.env.AWS_ACCESS_KEY_ID ?? "",
    secretAccessKey: settings.env.AWS_SECRET_ACCESS_KEY ?? "",
    sessionToken: settings.env.AWS_SESSION_TOKEN,
  };
  const client = new S3Client({
    bucket,
    credentials,
    region: settings.region,
    endpoint: settings.endpoint,
    pathStyle: settings.pathStyle,
  });
  return { client, prefix };
}

/** Options for {@linkcode startObjectStore}. */
export interface ObjectStoreOptions extends ObjectStoreSettings {
  /** Chronicle's database (its connection). */
  db: DatabaseSync;
  /** The database file, for checkpoints. */
  database: string;
  /** The CAS, which gets the bucket as its tier. */
  cas: Cas;
  /** Its folder, for checkpoints. */
  casDir: string;
  /** Milliseconds between periodic checkpoints; none when absent. */
  checkpointIntervalMs?: number | undefined;
  /** Checkpoints kept in the bucket. @default {10} */
  checkpointKeep?: number | undefined;
  /** Most bytes of local object files; older ones safe in the bucket are evicted. */
  cacheLimitBytes?: number | undefined;
  /** How often the cache limit is enforced. @default {30000} */
  evictIntervalMs?: number | undefined;
}

/** The object-store tier's state, for `status`, `/ready` and `/metrics`. */
export interface ObjectStoreStatus {
  /** `s3://BUCKET/PREFIX`. */
  location: string;
  /** Write-behind. */
  uploads: UploaderStatus;
  /** Read-through. */
  reads: ObjectTierStats;
  /** The last checkpoint put in the bucket, if any since the start. */
  lastCheckpoint: { id: string; sequence: number; at: string } | null;
  /** The last checkpoint failure, if the last try failed. */
  checkpointError: string | null;
  /** Local copies evicted under the cache limit since the start. */
  evicted: { objects: number; bytes: number };
  /** What is degraded, for `/ready` (empty when all is well). */
  degraded: string[];
}

/** The running tier: uploads, read-through, periodic checkpoints. */
export interface ObjectStoreService {
  /** The state, for `status` and `/metrics`. */
  status(): ObjectStoreStatus;
  /** Queues newly recorded content for upload at once. */
  notice(contents: Iterable<{ hash: string; size: number }>): void;
  /** What is degraded right now (cheap, for `/ready`). */
  degraded(): string[];
  /** Takes a checkpoint into the bucket now. */
  checkpoint(): Promise<BucketCheckpointResult>;
  /** Enforces the cache limit now (nothing without one); returns what went. */
  evict(): Promise<{ objects: number; bytes: number }>;
  /** Stops the loops; with `finalCheckpoint`, takes one last checkpoint first (SIGTERM). */
  stop(finalCheckpoint: boolean): Promise<void>;
}

/**
 * Starts the object-store tier on a running Chronicle: the bucket becomes the CAS's
 * read-through tier, the uploader sends what is not there yet, and, with an interval,
 * checkpoints go to the bucket on a timer (and once more at a clean shutdown). If the
 * bucket cannot be reached, local work continues and the queue waits.
 *
 * @param options The bucket, the store, and the checkpoint schedule.
 * @returns The running service.
 * @throws {TypeError} For a malformed location or endpoint, or missing credentials.
 */
export function startObjectStore(options: ObjectStoreOptions): ObjectStoreService {
  const { client, prefix } = openBucket(options);
  const location = formatS3Location({ bucket: client.bucket, prefix });
  const tier = new ObjectTier(client, prefix);
  options.cas.setTier(tier);
  const uploader = new Uploader({ db: options.db, cas: options.cas, client, prefix });
  uploader.start();
  let lastCheckpoint: ObjectStoreStatus["lastCheckpoint"] = null;
  let checkpointError: string | null = null;
  // Checkpoints run one after another. A caller gets one taken after its call (the final
  // one at SIGTERM must hold the last write), never one already under way; the timer skips
  // its turn while one runs.
  let chain: Promise<unknown> = Promise.resolve();
  let inFlight = 0;
  const take = (): Promise<BucketCheckpointResult> =>
    checkpointToBucket({
      database: options.database,
      casDir: options.casDir,
      client,
      prefix,
      keep: options.checkpointKeep ?? 10,
    }).then((result) => {
      lastCheckpoint = { id: result.id, sequence: result.sequence, at: result.created };
      checkpointError = null;
      log("info", "checkpoint in the object store", { id: result.id, sequence: result.sequence });
      return result;
    }, (error) => {
      checkpointError = error instanceof Error ? error.message : String(error);
      throw error;
    });
  const checkpoint = (): Promise<BucketCheckpointResult> => {
    inFlight++;
    const next = chain.catch(() => {}).then(take).finally(() => inFlight--);
    chain = next;
    return next;
  };
  const timer = options.checkpointIntervalMs === undefined ? undefined : setInterval(() => {
    if (inFlight > 0) return;
    checkpoint().catch((error) => log("warn", "periodic checkpoint failed", { error }));
  }, options.checkpointIntervalMs);
  const evicted = { objects: 0, bytes: 0 };
  const evict = async () => {
    if (options.cacheLimitBytes === undefined) return { objects: 0, bytes: 0 };
    const removed = await options.cas.evict(
      options.cacheLimitBytes,
      (hash) => uploader.isUploaded(hash),
    );
    evicted.objects += removed.removedObjects;
    evicted.bytes += removed.removedBytes;
    return { objects: removed.removedObjects, bytes: removed.removedBytes };
  };
  const evictTimer = options.cacheLimitBytes === undefined ? undefined : setInterval(() => {
    evict().catch((error) => log("warn", "cache eviction failed", { error }));
  }, options.evictIntervalMs ?? 30_000);
  const degraded = (): string[] => {
    const problems: string[] = [];
    if (checkpointError !== null) problems.push(`object store checkpoint: ${checkpointError}`);
    const failing = uploader.failing;
    if (failing !== null) problems.push(`object store uploads: ${failing}`);
    return problems;
  };
  return {
    status() {
      return {
        location,
        uploads: uploader.status(),
        reads: tier.stats(),
        lastCheckpoint,
        checkpointError,
        evicted: { ...evicted },
        degraded: degraded(),
      };
    },
    notice: (contents) => uploader.notice(contents),
    degraded,
    checkpoint,
    evict,
    async stop(finalCheckpoint) {
      clearInterval(timer);
      clearInterval(evictTimer);
      if (finalCheckpoint) {
        await checkpoint().catch((error) => log("warn", "final checkpoint failed", { error }));
      }
      await uploader.stop();
      options.cas.setTier(null);
    },
  };
}
