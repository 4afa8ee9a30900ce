/**
 * Where things live in the bucket, under the configured prefix. Content is keyed by its
 * hash alone, so every instance sharing a bucket shares content: an object once there is
 * never uploaded again.
 *
 * - `objects/ab/<hash>`: a whole content, or one chunk of a large one;
 * - `manifests/ab/<hash>.json`: how a large content is assembled from chunks
 *   (both laid out as in the local CAS: `casObjectPath`, `casManifestPath`);
 * - `checkpoints/<id>/…`: one checkpoint (database copy, object list, and
 *   `checkpoint.json`, written last: a checkpoint without it is incomplete).
 *
 * @module
 */
import { casManifestPath, casObjectPath } from "../cas/mod.ts";

/** Key of an object (whole content or chunk). */
export function objectKey(prefix: string, hash: string): string {
  return `${prefix}${casObjectPath(hash)}`;
}

/** Key of a chunk manifest. */
export function manifestKey(prefix: string, hash: string): string {
  return `${prefix}${casManifestPath(hash)}`;
}

/** The folder of checkpoints. */
export function checkpointsKey(prefix: string): string {
  return `${prefix}checkpoints/`;
}

/** Key of one file of one checkpoint. */
export function checkpointFileKey(prefix: string, id: string, name: string): string {
  return `${checkpointsKey(prefix)}${id}/${name}`;
}

/**
 * A checkpoint id that sorts by time: the UTC time with milliseconds, `:` and `.` made
 * safe for keys and file names.
 */
export function checkpointId(date: Date): string {
  return date.toISOString().replace(/[:.]/g, "-");
}
