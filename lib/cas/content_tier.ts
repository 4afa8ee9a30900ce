/**
 * A slower place that may hold content this store lacks, such as an object-store bucket
 * shared by many hosts. The CAS asks it only for what it does not hold, and trusts
 * nothing it answers: every object is verified against its hash (and a manifest against
 * the content's) before it is stored locally or returned.
 */
export interface ContentTier {
  /**
   * Fetches one object: a whole content or a chunk.
   *
   * @param hash The object's hash.
   * @returns Its bytes, or `null` when the tier does not hold it.
   */
  getObject(hash: string): Promise<Uint8Array | null>;
  /**
   * Fetches the chunk manifest of a content stored in chunks.
   *
   * @param hash The content's hash.
   * @returns The manifest (unchecked), or `null` when the tier has none.
   */
  getManifest(hash: string): Promise<unknown>;
  /**
   * Told when an object it answered did not match its hash, so it can report it.
   *
   * @param hash The object asked for.
   * @param actual What its bytes hash to.
   */
  reportCorrupt?(hash: string, actual: string): void;
  /**
   * Whether what it answers is kept already, in this same store, by whoever answers (a
   * command's reads through the Chronicle running on its workspace): returned, not stored
   * again, so a large content read that way is not kept twice (whole, beside its chunks).
   * @default {false}
   */
  readonly keepsWhatItAnswers?: boolean;
}
