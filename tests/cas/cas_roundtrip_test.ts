import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import {
  Cas,
  CHUNK_AVERAGE_SIZE,
  CHUNK_MAX_SIZE,
  CHUNKING_THRESHOLD,
  CorruptContentError,
  EMPTY_HASH,
  sha256Hex,
  type StoredContent,
} from "../../lib/cas/mod.ts";
import {
  assertBytes,
  concatBytes,
  listFiles,
  manifestFile,
  objectFile,
  pseudoRandomBytes,
  streamOf,
  withTempDir,
} from "./_helpers.ts";

const MiB = 1024 * 1024;

const SIZES = [
  { description: "empty", size: 0 },
  { description: "one byte", size: 1 },
  { description: "inline limit", size: 4096 },
  { description: "100 kB", size: 100_000 },
  { description: "4 MiB - 1", size: CHUNKING_THRESHOLD - 1 },
  { description: "exactly 4 MiB", size: CHUNKING_THRESHOLD },
  { description: "12 MiB", size: 12 * MiB },
];

type Put = (cas: Cas, bytes: Uint8Array, dir: string) => Promise<StoredContent>;
const PUTS: { name: string; put: Put }[] = [
  { name: "putBytes", put: (cas, bytes) => cas.putBytes(bytes) },
  {
    name: "putFile",
    put: async (cas, bytes, dir) => {
      const path = join(dir, "source.bin");
      await Deno.writeFile(path, bytes);
      return await cas.putFile(path);
    },
  },
  {
    name: "putStream",
    put: (cas, bytes) => cas.putStream(streamOf(bytes, [65536 + 7, 1, 3 * MiB])),
  },
];

async function readAllStream(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const pieces: Uint8Array[] = [];
  for await (const piece of stream) pieces.push(piece);
  return concatBytes(pieces);
}

Deno.test("Cas round-trips content of every size through every put and read", async (t) => {
  await withTempDir(async (dir) => {
    const cas = await Cas.open(join(dir, "cas"));
    for (const [i, { description, size }] of SIZES.entries()) {
      const bytes = pseudoRandomBytes(size, 100 + i);
      const hash = sha256Hex(bytes);
      const chunked = size >= CHUNKING_THRESHOLD;
      let firstManifest: unknown = undefined;
      for (const { name, put } of PUTS) {
        await t.step(`${description} via ${name}`, async () => {
          assert.deepEqual(await put(cas, bytes, dir), { hash, size, chunked });
          assert.equal(await cas.has(hash), true);
          assert.equal(await cas.objectSize(hash), size);
          assertBytes(await cas.readBytes(hash), bytes, "readBytes");
          assertBytes(await readAllStream(cas.readStream(hash)), bytes, "readStream");
          const dest = join(dir, "out.bin");
          await cas.writeTo(hash, dest);
          assertBytes(await Deno.readFile(dest), bytes, "writeTo");
          const manifest = await cas.manifest(hash);
          if (!chunked) {
            assert.equal(manifest, null);
            return;
          }
          assert.ok(manifest !== null);
          assert.equal(manifest.total_size, size);
          assert.equal(manifest.chunk_size, CHUNK_AVERAGE_SIZE);
          for (const ref of manifest.chunks) {
            assert.ok(ref.size <= CHUNK_MAX_SIZE);
            assertBytes(
              await cas.readBytes(ref.hash),
              bytes.subarray(ref.offset, ref.offset + ref.size),
            );
          }
          // Every put chunks the same content the same way.
          firstManifest ??= manifest;
          assert.deepEqual(manifest, firstManifest);
        });
      }
    }
    await t.step("the empty content is stored under EMPTY_HASH", async () => {
      assert.equal(await cas.has(EMPTY_HASH), true);
      assert.equal((await cas.readBytes(EMPTY_HASH)).length, 0);
    });
    await t.step("no temp file is left behind", async () => {
      assert.deepEqual(await listFiles(join(dir, "cas", "tmp")), []);
    });
  });
});

Deno.test("Cas stores the same content once", async (t) => {
  await withTempDir(async (dir) => {
    const cas = await Cas.open(dir);
    await t.step("small content", async () => {
      const bytes = pseudoRandomBytes(5000, 1);
      const first = await cas.putBytes(bytes);
      const again = await cas.putBytes(bytes.slice());
      assert.deepEqual(again, first);
      assert.deepEqual(await cas.stats(), { objects: 1, manifests: 0, bytes: 5000 });
    });
    await t.step("chunked content", async () => {
      const bytes = pseudoRandomBytes(9 * MiB, 2);
      const { hash } = await cas.putBytes(bytes);
      const once = await cas.stats();
      await cas.putStream(streamOf(bytes, [MiB]));
      await cas.putBytes(bytes);
      assert.deepEqual(await cas.stats(), once);
      const manifest = await cas.manifest(hash);
      assert.equal(once.objects, 1 + manifest!.chunks.length);
      assert.equal(once.manifests, 1);
    });
    await t.step("an existing object is not rewritten", async () => {
      const bytes = pseudoRandomBytes(3000, 3);
      const { hash } = await cas.putBytes(bytes);
      const before = await Deno.stat(objectFile(dir, hash));
      await cas.putBytes(bytes);
      const after = await Deno.stat(objectFile(dir, hash));
      assert.equal(after.ino, before.ino);
    });
  });
});

Deno.test("Cas.putFile() and putStream() chunk a large input as it is read", async () => {
  await withTempDir(async (dir) => {
    const cas = await Cas.open(join(dir, "cas"));
    // A content whose chunks are all cut before it reaches the threshold, and then more.
    const bytes = pseudoRandomBytes(CHUNKING_THRESHOLD + 3 * MiB + 5, 77);
    const source = join(dir, "big.bin");
    await Deno.writeFile(source, bytes);
    const fromFile = await cas.putFile(source);
    assert.equal(fromFile.chunked, true);
    const fromStream = await cas.putStream(streamOf(bytes, [CHUNKING_THRESHOLD - 1, 2]));
    assert.deepEqual(fromStream, fromFile);
    assertBytes(await cas.readBytes(fromFile.hash), bytes);
  });
});

Deno.test("Cas.writeTo() keeps the permission bits and replaces the destination", async (t) => {
  await withTempDir(async (dir) => {
    const cas = await Cas.open(join(dir, "cas"));
    const { hash } = await cas.putBytes(new TextEncoder().encode("#!/bin/sh\necho hi\n"));
    const cases = [
      { description: "executable", mode: 0o100755, expected: 0o755 },
      { description: "private", mode: 0o100600, expected: 0o600 },
      { description: "setgid and sticky", mode: 0o102751, expected: 0o2751 },
      { description: "read-only", mode: 0o100444, expected: 0o444 },
      { description: "default", mode: undefined, expected: 0o644 },
    ];
    for (const { description, mode, expected } of cases) {
      await t.step(description, async () => {
        const dest = join(dir, "script.sh");
        await Deno.writeTextFile(dest, "old content");
        await cas.writeTo(hash, dest, mode === undefined ? {} : { mode });
        assert.equal((await Deno.stat(dest)).mode! & 0o7777, expected);
        assert.equal(await Deno.readTextFile(dest), "#!/bin/sh\necho hi\n");
        assert.deepEqual(await listFiles(dir).then((f) => f.filter((p) => !p.startsWith("cas/"))), [
          "script.sh",
        ]);
      });
    }
    await t.step("a destination whose name is as long as allowed", async () => {
      const name = `${"é".repeat(120)}.txt`; // 244 bytes of the 255 a name may have
      await cas.writeTo(hash, join(dir, name));
      assert.equal(await Deno.readTextFile(join(dir, name)), "#!/bin/sh\necho hi\n");
      await Deno.remove(join(dir, name));
    });
  });
});

Deno.test("Cas.putStream() of a failing stream rejects and stores no content", async () => {
  await withTempDir(async (dir) => {
    const cas = await Cas.open(dir);
    const bytes = pseudoRandomBytes(9 * MiB, 5);
    let at = 0;
    const failing = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at >= 7 * MiB) {
          controller.error(new Error("source went away"));
          return;
        }
        controller.enqueue(bytes.slice(at, at + MiB));
        at += MiB;
      },
    });
    await assert.rejects(cas.putStream(failing), /source went away/);
    const stats = await cas.stats();
    assert.equal(stats.manifests, 0, "no manifest for a content never completed");
    assert.equal(await cas.has(sha256Hex(bytes)), false);
    assert.deepEqual(await listFiles(join(dir, "tmp")), []);
  });
});

Deno.test("Cas.putFile() with alreadyStored re-checks a file without writing or refreshing it", async () => {
  await withTempDir(async (dir) => {
    const cas = await Cas.open(join(dir, "cas"));
    const file = join(dir, "file.txt");
    await Deno.writeTextFile(file, "unchanged");
    const first = await cas.putFile(file);
    const object = objectFile(cas.root, first.hash);
    const old = new Date(Date.now() - 3_600_000);
    await Deno.utime(object, old, old);
    const again = await cas.putFile(file, { alreadyStored: first.hash });
    assert.deepEqual(again, first);
    assert.equal((await Deno.stat(object)).mtime?.getTime(), old.getTime(), "not refreshed");
    await Deno.writeTextFile(file, "changed");
    const changed = await cas.putFile(file, { alreadyStored: first.hash });
    assert.equal(changed.hash, sha256Hex(new TextEncoder().encode("changed")));
    assertBytes(await cas.readBytes(changed.hash), new TextEncoder().encode("changed"));
  });
});

Deno.test("Cas.putFile() with alreadyStored re-checks a large file by its hash first: no chunk written again, even one taken out", async () => {
  await withTempDir(async (dir) => {
    const cas = await Cas.open(join(dir, "cas"));
    const file = join(dir, "large.bin");
    const bytes = pseudoRandomBytes(6 * 1024 * 1024, 9);
    await Deno.writeFile(file, bytes);
    const first = await cas.putFile(file);
    assert.equal(first.chunked, true);
    // A sandbox replica takes a master's large content out of its store once written.
    await cas.dropChunked([first.hash], () => new Set());
    assert.equal(await cas.manifest(first.hash), null);
    const again = await cas.putFile(file, { alreadyStored: first.hash });
    assert.deepEqual(again, first);
    assert.equal(await cas.manifest(first.hash), null, "nothing stored again");
    assert.deepEqual(await listFiles(join(dir, "cas", "objects")), []);
    // Changed, it is stored.
    bytes[100] = bytes[100]! ^ 0xff;
    await Deno.writeFile(file, bytes);
    const changed = await cas.putFile(file, { alreadyStored: first.hash });
    assert.equal(changed.hash, sha256Hex(bytes));
    assert.equal(sha256Hex(await cas.readBytes(changed.hash)), changed.hash);
  });
});

Deno.test("Cas.putVerified() with a deferred sync is readable at once and made durable by syncDeferred()", async () => {
  await withTempDir(async (dir) => {
    const cas = await Cas.open(join(dir, "cas"));
    const contents = Array.from({ length: 20 }, (_, i) => new TextEncoder().encode(`item ${i}`));
    await Promise.all(
      contents.map((bytes) => cas.putVerified(sha256Hex(bytes), bytes, { deferSync: true })),
    );
    for (const bytes of contents) assertBytes(await cas.readBytes(sha256Hex(bytes)), bytes);
    await Promise.all([cas.syncDeferred(), cas.syncDeferred()]);
    await cas.syncDeferred(); // nothing left to flush
    await assert.rejects(
      cas.putVerified(sha256Hex(contents[0]!), contents[1]!, { deferSync: true }),
      CorruptContentError,
    );
  });
});

Deno.test("Cas.writeTo() with the bytes in hand writes them, stores them (chunked when large) and refuses a wrong hash", async () => {
  await withTempDir(async (dir) => {
    const cas = await Cas.open(join(dir, "cas"));
    const small = new TextEncoder().encode("small content");
    const large = pseudoRandomBytes(CHUNKING_THRESHOLD + 1000, 21);
    for (const [name, bytes] of [["small", small], ["large", large]] as const) {
      const hash = sha256Hex(bytes);
      await cas.writeTo(hash, join(dir, name), { bytes, visibleFirst: true });
      assertBytes(await Deno.readFile(join(dir, name)), bytes);
      await cas.syncDeferred();
      assertBytes(await cas.readBytes(hash), bytes);
    }
    assert.notEqual(await cas.manifest(sha256Hex(large)), null, "large content is chunked");
    await assert.rejects(
      cas.writeTo(sha256Hex(small), join(dir, "wrong"), { bytes: large }),
      CorruptContentError,
    );
    await assert.rejects(Deno.lstat(join(dir, "wrong")), Deno.errors.NotFound);
  });
});

Deno.test("Cas makes a fan-out folder once for concurrent writes, and again when it was removed underneath", async () => {
  await withTempDir(async (dir) => {
    const cas = await Cas.open(join(dir, "cas"));
    // 300 objects put at once into 256 new fan-out folders: many share one.
    const contents = Array.from({ length: 300 }, (_, seed) => pseudoRandomBytes(70_000, seed));
    const folders = new Set(
      contents.map((bytes) => dirname(objectFile(cas.root, sha256Hex(bytes)))),
    );
    assert.ok(folders.size < contents.length, "some share a folder");
    await Promise.all(contents.map((bytes) => cas.putBytes(bytes)));
    for (const bytes of contents) assertBytes(await cas.readBytes(sha256Hex(bytes)), bytes);
    // The folder of the first, removed by hand with everything in it.
    const first = sha256Hex(contents[0]!);
    await Deno.remove(dirname(objectFile(cas.root, first)), { recursive: true });
    assert.equal(await cas.has(first), false);
    await cas.putBytes(contents[0]!);
    assertBytes(await cas.readBytes(first), contents[0]!, "written into the folder made again");
    const manifested = pseudoRandomBytes(5 * 1024 * 1024, 77);
    const { hash } = await cas.putBytes(manifested);
    await Deno.remove(dirname(manifestFile(cas.root, hash)), { recursive: true });
    await cas.putBytes(manifested);
    assertBytes(await cas.readBytes(hash), manifested, "a manifest too");
  });
});
