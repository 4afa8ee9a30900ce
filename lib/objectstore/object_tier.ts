import type { ContentTier } from "../cas/mod.ts";
import { manifestKey, objectKey } from "./keys.ts";
import type { S3Client } from "./s3_client.ts";

/** What the read-through tier has done since it started. */
export interface ObjectTierStats {
  /** Objects fetched from the bucket. */
  fetchedObjects: number;
  /** Their bytes. */
  fetchedBytes: number;
  /** Objects whose bytes did not match their hash (never served). */
  corruptObjects: number;
  /** The last corrupt object's hash, for the report. */
  lastCorrupt: string | null;
}

/**
 * The bucket as a tier of the CAS: content missing locally (evicted, or a rehydrated
 * host) is fetched from `objects/` and `manifests/` on demand. The CAS verifies every
 * object before use and reports a mismatch here, so a corrupt object in the bucket is
 * counted and named, never served.
 */
export class ObjectTier implements ContentTier {
  readonly #client: S3Client;
  readonly #prefix: string;
  readonly #stats: ObjectTierStats = {
    fetchedObjects: 0,
    fetchedBytes: 0,
    corruptObjects: 0,
    lastCorrupt: null,
  };

  /**
   * Reads through `client` under `prefix`.
   *
   * @param client The bucket's client.
   * @param prefix The key prefix (`""` or ending in `/`).
   */
  constructor(client: S3Client, prefix: string) {
    this.#client = client;
    this.#prefix = prefix;
  }

  /** {@inheritDoc ContentTier.getObject} */
  async getObject(hash: string): Promise<Uint8Array | null> {
    const bytes = await this.#client.getObject(objectKey(this.#prefix, hash));
    if (bytes !== null) {
      this.#stats.fetchedObjects++;
      this.#stats.fetchedBytes += bytes.length;
    }
    return bytes;
  }

  /** {@inheritDoc ContentTier.getManifest} */
  async getManifest(hash: string): Promise<unknown> {
    const bytes = await this.#client.getObject(manifestKey(this.#prefix, hash));
    if (bytes === null) return null;
    try {
      return JSON.parse(new TextDecoder().decode(bytes));
    } catch {
      return { invalid: "not JSON" }; // the CAS reports it as an invalid manifest
    }
  }

  /** {@inheritDoc ContentTier.reportCorrupt} */
  reportCorrupt(hash: string): void {
    this.#stats.corruptObjects++;
    this.#stats.lastCorrupt = hash;
  }

  /** What it has fetched, and the corrupt objects it met. */
  stats(): ObjectTierStats {
    return { ...this.#stats };
  }
}
