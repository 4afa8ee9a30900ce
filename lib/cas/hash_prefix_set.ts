import { isContentHash } from "./content_hash.ts";

/** Hex digits of a hash kept: 52 bits, the most a float64 holds exactly. */
const PREFIX_DIGITS = 13;

/**
 * A set of content hashes held as the first 52 bits of each, 8 bytes a hash in one typed
 * array, instead of a `Set` of strings (about 100 bytes a hash): a sweep of a store of
 * 100,000 files holds every referenced hash while it walks the CAS, and a replica does
 * that while it catches up. A hash never added is taken for one added when both start
 * with the same 52 bits (a chance of 1 in 2^52 for each hash held), so it suits only
 * callers for whom a wrong "yes" is harmless, such as a sweep, which then keeps an
 * object it could have removed. A wrong "no" never happens.
 *
 * @example Keeping two hashes
 * ```ts
 * import { HashPrefixSet } from "./hash_prefix_set.ts";
 * const keep = new HashPrefixSet().add("a".repeat(64)).add("b".repeat(64));
 * if (!keep.has("a".repeat(64)) || keep.has("c".repeat(64))) throw new Error("wrong");
 * ```
 */
export class HashPrefixSet {
  #prefixes = new Float64Array(1024);
  #count = 0;
  /** How many leading prefixes are sorted and distinct; those after were added since. */
  #sorted = 0;

  /**
   * Adds a hash. A string that is not a content hash (such as a deletion's `""`) is
   * ignored: no stored object has such a name.
   *
   * @returns This set.
   */
  add(hash: string): this {
    if (!isContentHash(hash)) return this;
    if (this.#count === this.#prefixes.length) {
      const larger = new Float64Array(this.#prefixes.length * 2);
      larger.set(this.#prefixes);
      this.#prefixes = larger;
    }
    this.#prefixes[this.#count++] = prefixOf(hash);
    return this;
  }

  /** Whether `hash` was added (or shares its first 52 bits with one added). */
  has(hash: string): boolean {
    if (!isContentHash(hash)) return false;
    this.#sortAdded();
    const wanted = prefixOf(hash);
    let low = 0;
    let high = this.#sorted - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const value = this.#prefixes[middle]!;
      if (value === wanted) return true;
      if (value < wanted) low = middle + 1;
      else high = middle - 1;
    }
    return false;
  }

  /** How many distinct prefixes it holds. */
  get size(): number {
    this.#sortAdded();
    return this.#sorted;
  }

  /** Sorts what was added since the last look and drops repeats. */
  #sortAdded(): void {
    if (this.#sorted === this.#count) return;
    const all = this.#prefixes.subarray(0, this.#count).sort();
    let distinct = 0;
    for (let at = 0; at < all.length; at++) {
      const value = all[at]!;
      if (distinct === 0 || value !== all[distinct - 1]) all[distinct++] = value;
    }
    this.#count = this.#sorted = distinct;
  }
}

function prefixOf(hash: string): number {
  return parseInt(hash.slice(0, PREFIX_DIGITS), 16);
}
