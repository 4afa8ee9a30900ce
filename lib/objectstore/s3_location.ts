/** A bucket and a key prefix, from `s3://BUCKET/PREFIX`. */
export interface S3Location {
  /** The bucket's name. */
  bucket: string;
  /** Every key starts with this: `""`, or a prefix ending in `/`. */
  prefix: string;
}

/** What S3 allows in a bucket name (3 to 63 lowercase letters, digits, dots, hyphens). */
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/**
 * Reads an `s3://BUCKET/PREFIX` location. The prefix is normalized to end in `/` (or be
 * empty), so `s3://b/agents/a1` and `s3://b/agents/a1/` name the same place.
 *
 * @param text The location as given on the command line or in the config file.
 * @returns The bucket and the prefix.
 * @throws {TypeError} When it is not an `s3://` URL with a valid bucket name, or the
 *   prefix holds an empty, `.` or `..` segment.
 * @example
 * ```ts
 * import { deepStrictEqual } from "node:assert/strict";
 * import { parseS3Location } from "./s3_location.ts";
 *
 * deepStrictEqual(parseS3Location("s3://backups/agents/a1"), {
 *   bucket: "backups",
 *   prefix: "agents/a1/",
 * });
 * ```
 */
export function parseS3Location(text: string): S3Location {
  const match = /^s3:\/\/([^/]*)(?:\/(.*))?$/.exec(text);
  if (match === null) {
    throw new TypeError(`Object store "${text}" is not an s3://BUCKET/PREFIX location`);
  }
  const bucket = match[1]!;
  if (!BUCKET_NAME.test(bucket) || bucket.includes("..")) {
    throw new TypeError(
      `Bucket name "${bucket}" is invalid: 3 to 63 lowercase letters, digits, dots and hyphens`,
    );
  }
  const segments = (match[2] ?? "").split("/");
  if (segments.at(-1) === "") segments.pop();
  for (const segment of segments) {
    if (segment === "" || segment === "." || segment === "..") {
      throw new TypeError(`Prefix of "${text}" has an empty, "." or ".." segment`);
    }
  }
  return { bucket, prefix: segments.length === 0 ? "" : `${segments.join("/")}/` };
}

/**
 * Writes a location back as `s3://BUCKET/PREFIX`.
 *
 * @param location The bucket and prefix.
 * @returns The URL form.
 */
export function formatS3Location(location: S3Location): string {
  return `s3://${location.bucket}/${location.prefix}`;
}
