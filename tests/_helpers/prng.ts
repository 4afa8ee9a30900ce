/**
 * A small seeded pseudo-random generator, so every benchmark run builds the same data.
 *
 * @module
 */

/**
 * Deterministic pseudo-random numbers (mulberry32): the same seed gives the same sequence
 * on every machine. Not for anything secret.
 *
 * @example Two generators with one seed agree
 * ```ts
 * import { Prng } from "./prng.ts";
 * const a = new Prng(7);
 * const b = new Prng(7);
 * if (a.int(1000) !== b.int(1000)) throw new Error("not deterministic");
 * ```
 */
export class Prng {
  #state: number;

  /** @param seed Any 32-bit integer. */
  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** @returns The next number in `[0, 1)`. */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /**
   * @param limit Exclusive upper bound, at least 1.
   * @returns An integer in `[0, limit)`.
   */
  int(limit: number): number {
    return Math.floor(this.next() * limit);
  }

  /**
   * @param length How many bytes.
   * @returns Pseudo-random bytes.
   */
  bytes(length: number): Uint8Array {
    const out = new Uint8Array(length);
    let i = 0;
    for (; i + 4 <= length; i += 4) {
      const word = (this.next() * 4294967296) >>> 0;
      out[i] = word & 0xff;
      out[i + 1] = (word >>> 8) & 0xff;
      out[i + 2] = (word >>> 16) & 0xff;
      out[i + 3] = word >>> 24;
    }
    for (; i < length; i++) out[i] = this.int(256);
    return out;
  }

  /**
   * Shuffles a copy of `items` (Fisher–Yates).
   *
   * @param items What to shuffle; left untouched.
   * @returns The shuffled copy.
   */
  shuffled<T>(items: readonly T[]): T[] {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }
}
