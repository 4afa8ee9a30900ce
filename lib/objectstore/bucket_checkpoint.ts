import { join } from "node:path";
import { Cas } from "../cas/mod.ts";
import {
  checkpoint,
  CheckpointError,
  type CheckpointInfo,
  rehydrate,
  type RehydrateResult,
} from "../checkpoint/mod.ts";
import { forEachLimited } from "../concurrency/mod.ts";
import { openDatabase } from "../db/mod.ts";
import { checkpointFileKey, checkpointId, checkpointsKey } from "./keys.ts";
import { ObjectTier } from "./object_tier.ts";
import type { S3Client } from "./s3_client.ts";
import { sendContent } from "./send_content.ts";
import { uploadedIn } from "./uploader.ts";

/** The files of one checkpoint, in the order they are written (the last marks it whole). */
const FILES = ["chronicle.db", "objects.txt", "checkpoint.json"] as const;

/** Options for {@linkcode checkpointToBucket}. */
export interface BucketCheckpointOptions {
  /** The live database. */
  database: string;
  /** The CAS folder holding its content. */
  casDir: string;
  /** The bucket. */
  client: S3Client;
  /** Key prefix (`""` or ending in `/`). */
  prefix: string;
  /** Checkpoints to keep in the bucket; older ones are deleted. @default {10} */
  keep?: number;
  /** Objects sent at once. @default {8} */
  concurrency?: number;
}

/** What {@linkcode checkpointToBucket} did. */
export interface BucketCheckpointResult extends CheckpointInfo {
  /** The checkpoint's id in the bucket. */
  id: string;
  /** Where it is: `s3://BUCKET/PREFIXcheckpoints/ID/`. */
  location: string;
  /** Bytes of objects sent (the bucket lacked them). */
  uploadedBytes: number;
  /** Objects the bucket held already. */
  alreadyThere: number;
  /** Old checkpoints deleted by retention. */
  removed: string[];
}

/**
 * Takes a consistent checkpoint (see `checkpoint`) and puts it in the bucket: first every
 * object it references that the bucket lacks, then the database copy and the object
 * list, and last `checkpoint.json`, so a checkpoint is usable exactly when that file is
 * there. Then deletes checkpoints beyond `keep` (objects are never deleted: other
 * checkpoints and instances may share them).
 *
 * @param options The store, the bucket, and retention.
 * @returns The checkpoint's description, its id and what was sent.
 * @throws {CheckpointError} When the checkpoint cannot be taken.
 * @throws {S3Error} When the bucket fails; nothing is marked complete then.
 */
export async function checkpointToBucket(
  options: BucketCheckpointOptions,
): Promise<BucketCheckpointResult> {
  const staging = await Deno.makeTempDir({ prefix: "chronicle-checkpoint-" });
  try {
    const local = await checkpoint({
      database: options.database,
      casDir: options.casDir,
      output: join(staging, "checkpoint"),
    });
    const hashes = (await Deno.readTextFile(join(local.output, "objects.txt")))
      .split("\n").filter((line) => line !== "");
    // The copy's own small objects are read from it: it is consistent with its list.
    const db = openDatabase(join(local.output, "chronicle.db"), { readOnly: true });
    let uploadedBytes = 0;
    let alreadyThere = 0;
    try {
      // What the uploader recorded as in the bucket (at the copy's moment) is not asked again.
      const known = uploadedIn(db);
      const missing = hashes.filter((hash) => !known.has(hash));
      alreadyThere += hashes.length - missing.length;
      const cas = await Cas.open(options.casDir, { db });
      await forEachLimited(missing, options.concurrency ?? 8, async (hash) => {
        const sent = await sendContent(cas, options.client, options.prefix, hash);
        uploadedBytes += sent.bytes;
        alreadyThere += sent.alreadyThere;
      });
    } finally {
      db.close();
    }
    const id = checkpointId(new Date(local.created));
    for (const name of FILES) {
      const bytes = await Deno.readFile(join(local.output, name));
      const type = name.endsWith(".json") ? "application/json" : "application/octet-stream";
      await options.client.putObject(checkpointFileKey(options.prefix, id, name), bytes, type);
    }
    const removed = await pruneCheckpoints(options.client, options.prefix, options.keep ?? 10);
    const { output: _output, copiedFiles: _files, copiedBytes: _bytes, ...info } = local;
    return {
      ...info,
      id,
      location: `s3://${options.client.bucket}/${checkpointsKey(options.prefix)}${id}/`,
      uploadedBytes,
      alreadyThere,
      removed,
    };
  } finally {
    await Deno.remove(staging, { recursive: true }).catch(() => {});
  }
}

/**
 * The complete checkpoints in the bucket (those whose `checkpoint.json` is there),
 * oldest first.
 *
 * @param client The bucket.
 * @param prefix Key prefix.
 * @returns Their ids.
 */
export async function listBucketCheckpoints(client: S3Client, prefix: string): Promise<string[]> {
  const base = checkpointsKey(prefix);
  const ids: string[] = [];
  for await (const key of client.listKeys(base)) {
    const [id, name] = key.slice(base.length).split("/");
    if (id !== undefined && name === "checkpoint.json") ids.push(id);
  }
  return ids.sort();
}

async function pruneCheckpoints(client: S3Client, prefix: string, keep: number): Promise<string[]> {
  const ids = await listBucketCheckpoints(client, prefix);
  const old = ids.slice(0, Math.max(0, ids.length - Math.max(1, keep)));
  for (const id of old) {
    // checkpoint.json first: a half-deleted checkpoint is never taken for a whole one.
    for (const name of [...FILES].reverse()) {
      await client.deleteObject(checkpointFileKey(prefix, id, name));
    }
  }
  return old;
}

/** Options for {@linkcode rehydrateFromBucket}. */
export interface BucketRehydrateOptions {
  /** The bucket. */
  client: S3Client;
  /** Key prefix (`""` or ending in `/`). */
  prefix: string;
  /** Which checkpoint. @default {the newest complete one} */
  id?: string | undefined;
  /** Where to install the database. */
  database: string;
  /** The CAS folder to fill. */
  casDir: string;
  /** The workspace to write the latest tree into. */
  workspace: string;
  /** Chronicle's data folder. @default {the database's folder} */
  dataDir?: string | undefined;
  /** Replace an existing database. @default {false} */
  force?: boolean | undefined;
  /**
   * Fetch every object the checkpoint references now (history included), rather than
   * only the latest tree's, leaving the rest to be fetched when first read.
   *
   * @default {false}
   */
  eager?: boolean | undefined;
}

/** What {@linkcode rehydrateFromBucket} did. */
export interface BucketRehydrateResult extends RehydrateResult {
  /** The checkpoint's id. */
  id: string;
  /** Objects fetched from the bucket. */
  fetchedObjects: number;
  /** Their bytes. */
  fetchedBytes: number;
}

/**
 * Brings a workspace back on a clean host from a checkpoint in the bucket: downloads its
 * database copy and object list, verifies and installs them (see `rehydrate`), and writes
 * the latest tree, each file's content fetched from the bucket and verified. Lazily (the
 * default) the history's content stays in the bucket until read through the object-store
 * tier; `eager` fetches it all now.
 *
 * @param options The bucket, the checkpoint, and where to install it.
 * @returns What was installed, written and fetched.
 * @throws {CheckpointError} When the bucket has no complete checkpoint or it is damaged.
 * @throws {S3Error} When the bucket fails.
 */
export async function rehydrateFromBucket(
  options: BucketRehydrateOptions,
): Promise<BucketRehydrateResult> {
  const id = options.id ?? (await listBucketCheckpoints(options.client, options.prefix)).at(-1);
  if (id === undefined) {
    throw new CheckpointError(
      `No checkpoint in s3://${options.client.bucket}/${checkpointsKey(options.prefix)}`,
    );
  }
  const staging = await Deno.makeTempDir({ prefix: "chronicle-rehydrate-" });
  try {
    for (const name of FILES) {
      const bytes = await options.client.getObject(checkpointFileKey(options.prefix, id, name));
      if (bytes === null) {
        throw new CheckpointError(`Checkpoint "${id}" in the bucket lacks "${name}"`);
      }
      await Deno.writeFile(join(staging, name), bytes);
    }
    const tier = new ObjectTier(options.client, options.prefix);
    const result = await rehydrate({
      from: staging,
      database: options.database,
      casDir: options.casDir,
      workspace: options.workspace,
      contentTier: tier,
      ...(options.dataDir !== undefined ? { dataDir: options.dataDir } : {}),
      ...(options.force !== undefined ? { force: options.force } : {}),
    });
    if (options.eager) await fetchAll(options, tier, staging);
    const { fetchedObjects, fetchedBytes } = tier.stats();
    return { ...result, id, fetchedObjects, fetchedBytes };
  } finally {
    await Deno.remove(staging, { recursive: true }).catch(() => {});
  }
}

/** Reads every listed content through the tier, so each is stored locally. */
async function fetchAll(
  options: BucketRehydrateOptions,
  tier: ObjectTier,
  staging: string,
): Promise<void> {
  const hashes = (await Deno.readTextFile(join(staging, "objects.txt")))
    .split("\n").filter((line) => line !== "");
  const db = openDatabase(options.database);
  try {
    const cas = await Cas.open(options.casDir, { db, tier });
    await forEachLimited(hashes, 8, async (hash) => {
      if (await cas.has(hash)) return; // a whole object, or a manifest with every chunk
      for await (const _piece of cas.readStream(hash)) { /* stored as it is read */ }
    });
  } finally {
    db.close();
  }
}
