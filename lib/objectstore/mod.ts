/**
 * The object-store tier of the CAS, for many hosts and scale to zero: content is durable
 * locally first, then uploaded to an S3-compatible bucket in the background (keys are
 * content hashes, so instances sharing a bucket share content); content missing locally
 * is read through from the bucket and verified; checkpoints go to the bucket and a clean
 * host rehydrates from them.
 *
 * @example Where a location points
 * ```ts
 * import { deepStrictEqual } from "node:assert/strict";
 * import { parseS3Location } from "./mod.ts";
 *
 * deepStrictEqual(parseS3Location("s3://fleet/agents/a1/"), { bucket: "fleet", prefix: "agents/a1/" });
 * ```
 *
 * @module
 */
export { formatS3Location, parseS3Location, type S3Location } from "./s3_location.ts";
export {
  type ObjectHead,
  S3_ATTEMPTS,
  S3Client,
  type S3ClientOptions,
  type S3Credentials,
  S3Error,
  s3RetryDelay,
} from "./s3_client.ts";
export { ObjectTier, type ObjectTierStats } from "./object_tier.ts";
export { Uploader, type UploaderOptions, type UploaderStatus } from "./uploader.ts";
export { sendContent, type SentContent } from "./send_content.ts";
export {
  type BucketCheckpointOptions,
  type BucketCheckpointResult,
  type BucketRehydrateOptions,
  type BucketRehydrateResult,
  checkpointToBucket,
  listBucketCheckpoints,
  rehydrateFromBucket,
} from "./bucket_checkpoint.ts";
export {
  type ObjectStoreOptions,
  type ObjectStoreService,
  type ObjectStoreSettings,
  type ObjectStoreStatus,
  openBucket,
  type OpenedBucket,
  startObjectStore,
} from "./object_store_service.ts";
export { checkpointId, manifestKey, objectKey } from "./keys.ts";
