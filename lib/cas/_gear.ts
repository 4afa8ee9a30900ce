/**
 * The FastCDC core shared by the pure and the streaming chunker: the gear table, the two
 * normalization masks and the cut-point scan. Internal to `lib/cas`.
 *
 * @module
 */

/** Smallest chunk (except a file's last): 256 KiB. The first bytes of a chunk are not hashed. */
export const MIN_SIZE = 256 * 1024;
/** Target average chunk size: 1 MiB. */
export const AVERAGE_SIZE = 1024 * 1024;
/** Largest chunk: 4 MiB. A chunk that reaches it is cut there. */
export const MAX_SIZE = 4 * 1024 * 1024;

// Normalized chunking, level 2 (FastCDC 2020): before the average size a cut needs
// log2(avg) + 2 = 22 zero bits, after it log2(avg) - 2 = 18. The fingerprint is 32 bits
// wide, so its top bits depend on the last 32 bytes; the masks take the top bits.
const MASK_S = 0xffff_fc00 | 0; // top 22 bits
const MASK_L = 0xffff_c000 | 0; // top 18 bits

/** Seed of the gear table. Changing it changes every chunk boundary (never correctness). */
const GEAR_SEED = 0x4348_524e; // "CHRN"

/** 256 pseudo-random 32-bit values from splitmix32, fixed by {@linkcode GEAR_SEED}. */
export const GEAR: Int32Array = makeGear(GEAR_SEED);

function makeGear(seed: number): Int32Array {
  const table = new Int32Array(256);
  let state = seed | 0;
  for (let i = 0; i < 256; i++) {
    state = (state + 0x9e37_79b9) | 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85eb_ca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2_ae35);
    table[i] = z ^ (z >>> 16);
  }
  return table;
}

/** Carries the rolling fingerprint out of {@linkcode findCut} without allocating. */
export interface ScanState {
  fp: number;
}

/**
 * Scans `buf` for the end of the chunk that starts at `start`, continuing a scan that
 * already covered `start..from` with fingerprint `state.fp`.
 *
 * @param buf The bytes.
 * @param start Where the current chunk starts.
 * @param from The first byte not yet scanned (at least `start`).
 * @param end One past the last byte available.
 * @param state The fingerprint so far; updated when no cut is found.
 * @returns The cut (one past the chunk's last byte), or -1 when `end` came first and the
 * chunk is still shorter than {@linkcode MAX_SIZE}.
 */
export function findCut(
  buf: Uint8Array,
  start: number,
  from: number,
  end: number,
  state: ScanState,
): number {
  const gear = GEAR;
  let fp = state.fp;
  let i = from > start + MIN_SIZE ? from : start + MIN_SIZE;
  const normalEnd = Math.min(end, start + AVERAGE_SIZE);
  for (; i < normalEnd; i++) {
    fp = ((fp << 1) + gear[buf[i]!]!) | 0;
    if ((fp & MASK_S) === 0) return i + 1;
  }
  const hardEnd = Math.min(end, start + MAX_SIZE);
  for (; i < hardEnd; i++) {
    fp = ((fp << 1) + gear[buf[i]!]!) | 0;
    if ((fp & MASK_L) === 0) return i + 1;
  }
  if (hardEnd === start + MAX_SIZE) return hardEnd;
  state.fp = fp;
  return -1;
}
