import assert from "node:assert/strict";
import { Cas, CorruptContentError, sha256Hex } from "../../lib/cas/mod.ts";
import { assertBytes, objectFile, pseudoRandomBytes, withTempDir } from "./_helpers.ts";

const KiB = 1024;

/** Flips a byte of a stored object file in place, behind the store's back. */
async function damage(root: string, hash: string): Promise<void> {
  const path = objectFile(root, hash);
  await Deno.chmod(path, 0o644);
  const bytes = await Deno.readFile(path);
  bytes[bytes.length >> 1] = bytes[bytes.length >> 1]! ^ 0x01;
  await Deno.writeFile(path, bytes);
}

/** What a read of `hash` gives: its bytes, or the error's class name. */
async function readOutcome(cas: Cas, hash: string): Promise<Uint8Array | string> {
  try {
    return await cas.readBytes(hash);
  } catch (error) {
    return (error as Error).constructor.name;
  }
}

Deno.test("objects put with readSoon are read back from memory once, within a bound, until a sweep", async (t) => {
  const table: {
    description: string;
    /** Sizes put, in order; the first is the one damaged on disk and read. */
    sizes: number[];
    readSoon: boolean;
    sweepFirst?: boolean;
    /** Reads before the one compared (each takes it from memory, if it is there). */
    readBefore?: number;
    expected: "bytes" | "CorruptContentError";
  }[] = [
    {
      description: "put with readSoon: the bytes put, not the damaged file",
      sizes: [100 * KiB],
      readSoon: true,
      expected: "bytes",
    },
    {
      description: "put without it: the file, found damaged",
      sizes: [100 * KiB],
      readSoon: false,
      expected: "CorruptContentError",
    },
    {
      description: "read once already: the file, found damaged (memory holds it for one read)",
      sizes: [100 * KiB],
      readSoon: true,
      readBefore: 1,
      expected: "CorruptContentError",
    },
    {
      description: "a sweep forgets it: the file, found damaged",
      sizes: [100 * KiB],
      readSoon: true,
      sweepFirst: true,
      expected: "CorruptContentError",
    },
    {
      description: "pushed out by 17 MiB put after it: the file, found damaged",
      sizes: [100 * KiB, ...Array(17).fill(1024 * KiB)],
      readSoon: true,
      expected: "CorruptContentError",
    },
    {
      description: "one larger than the bound is never kept",
      sizes: [17 * 1024 * KiB],
      readSoon: true,
      expected: "CorruptContentError",
    },
  ];
  for (const row of table) {
    await t.step(row.description, async () => {
      await withTempDir(async (dir) => {
        const cas = await Cas.open(dir);
        const contents = row.sizes.map((size, i) => pseudoRandomBytes(size, i + 1));
        const hashes = contents.map(sha256Hex);
        for (const [i, bytes] of contents.entries()) {
          await cas.putVerified(hashes[i]!, bytes, { deferSync: true, readSoon: row.readSoon });
        }
        await cas.syncDeferred();
        await damage(dir, hashes[0]!);
        for (let i = 0; i < (row.readBefore ?? 0); i++) {
          assertBytes(await cas.readBytes(hashes[0]!), contents[0]!);
        }
        if (row.sweepFirst) await cas.sweep(new Set(hashes));
        const outcome = await readOutcome(cas, hashes[0]!);
        if (row.expected === "bytes") assertBytes(outcome as Uint8Array, contents[0]!);
        else assert.equal(outcome, CorruptContentError.name);
      });
    });
  }
});

Deno.test("writeTo() writes an object put with readSoon from memory, whole", async () => {
  await withTempDir(async (dir) => {
    const cas = await Cas.open(`${dir}/cas`);
    const bytes = pseudoRandomBytes(300 * KiB, 9);
    const hash = sha256Hex(bytes);
    await cas.putVerified(hash, bytes, { deferSync: true, readSoon: true });
    await cas.syncDeferred();
    await Deno.remove(objectFile(`${dir}/cas`, hash)); // nothing on disk to read
    await cas.writeTo(hash, `${dir}/out.bin`, { mode: 0o644 });
    assertBytes(await Deno.readFile(`${dir}/out.bin`), bytes);
  });
});
