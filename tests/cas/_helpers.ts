/** Test helpers for `tests/cas`: deterministic bytes, temp folders, byte comparison. */
import assert from "node:assert/strict";
import { join } from "node:path";

export { pseudoRandomBytes } from "../_helpers/random_bytes.ts";
export { withTempDir } from "../_helpers/temp_dir.ts";

/** Asserts two byte arrays are equal, naming the first difference. */
export function assertBytes(actual: Uint8Array, expected: Uint8Array, what = "bytes"): void {
  assert.equal(actual.length, expected.length, `${what}: length`);
  for (let i = 0; i < actual.length; i++) {
    if (actual[i] !== expected[i]) assert.fail(`${what}: first difference at byte ${i}`);
  }
}

/** Concatenates pieces. */
export function concatBytes(pieces: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(pieces.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A stream yielding `bytes` in pieces of the given sizes, cycling through them. */
export function streamOf(bytes: Uint8Array, sizes: number[]): ReadableStream<Uint8Array> {
  let at = 0;
  let k = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) {
        controller.close();
        return;
      }
      const n = sizes[k++ % sizes.length]!;
      controller.enqueue(bytes.slice(at, at + n));
      at += n;
    },
  });
}

/** Every file under `dir` (recursive), as paths relative to it, sorted. */
export async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  async function walk(rel: string): Promise<void> {
    for await (const entry of Deno.readDir(join(dir, rel))) {
      const path = rel === "" ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory) await walk(path);
      else out.push(path);
    }
  }
  await walk("");
  return out.sort();
}

/** Path of an object file in a store laid out as `objects/ab/<hash>`. */
export function objectFile(root: string, hash: string): string {
  return join(root, "objects", hash.slice(0, 2), hash);
}

/** Path of a manifest file in a store laid out as `manifests/ab/<hash>.json`. */
export function manifestFile(root: string, hash: string): string {
  return join(root, "manifests", hash.slice(0, 2), `${hash}.json`);
}
