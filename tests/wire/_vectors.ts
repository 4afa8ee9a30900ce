// Shared by the wire tests: the bincode vectors in tests/testdata/bincode/, written by an
// independent Rust serde + bincode 1.x implementation (see docs/PROTOCOL.md).

/** The vector folder, resolved from the project root. */
export const VECTORS = new URL("../testdata/bincode/", import.meta.url);

/** One valid vector: its name, framed bytes and JSON text (with its trailing newline). */
export interface Vector {
  name: string;
  frame: Uint8Array;
  json: string;
}

/** Reads a file of the vector folder, failing loudly when the folder is missing. */
export function readVector(path: string): Uint8Array {
  try {
    return Deno.readFileSync(new URL(path, VECTORS));
  } catch (error) {
    throw new Error(
      `Bincode test vectors are missing: cannot read '${new URL(path, VECTORS).pathname}'`,
      { cause: error },
    );
  }
}

/** Every valid vector, sorted by name. */
export function loadVectors(): Vector[] {
  readVector("all.frames");
  const names = [...Deno.readDirSync(VECTORS)]
    .filter((e) => e.isFile && e.name.endsWith(".bin"))
    .map((e) => e.name.slice(0, -4))
    .sort();
  return names.map((name) => ({
    name,
    frame: readVector(`${name}.bin`),
    json: new TextDecoder().decode(readVector(`${name}.json`)),
  }));
}

/** Every invalid frame with the error code it must produce. */
export const INVALID: Record<string, string> = {
  invalid_bool: "invalid_bool",
  invalid_option_tag: "invalid_option",
  invalid_utf8: "invalid_utf8",
  oversized_header: "oversized_frame",
  string_length_past_frame: "length_past_end",
  trailing_byte: "trailing_bytes",
  truncated_header: "truncated_header",
  truncated_payload: "truncated_payload",
  unknown_variant_tag: "unknown_variant",
};

/** A small seeded PRNG (mulberry32), so that random tests repeat exactly. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
