/**
 * Deterministic pseudo-random bytes (xorshift32, a word at a time), so tests and benchmarks
 * that depend on content (chunk boundaries, incompressible files) repeat exactly.
 */
export function pseudoRandomBytes(length: number, seed: number): Uint8Array {
  const words = new Uint32Array(Math.ceil(length / 4));
  let s = (seed | 0) || 1;
  for (let i = 0; i < words.length; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    words[i] = s;
  }
  return new Uint8Array(words.buffer, 0, length);
}
