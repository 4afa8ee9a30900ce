import assert from "node:assert/strict";
import { join } from "node:path";
import {
  Cas,
  type ChunkManifest,
  ContentNotFoundError,
  CorruptContentError,
  sha256Hex,
} from "../../lib/cas/mod.ts";
import {
  assertBytes,
  concatBytes,
  listFiles,
  manifestFile,
  objectFile,
  pseudoRandomBytes,
  withTempDir,
} from "./_helpers.ts";

const MiB = 1024 * 1024;

/** Damages a stored file in place, as a failing disk or a stray editor would. */
const DAMAGES: { name: string; damage: (path: string) => Promise<void> }[] = [
  {
    name: "a flipped byte",
    damage: async (path) => {
      await Deno.chmod(path, 0o644);
      const bytes = await Deno.readFile(path);
      bytes[bytes.length >> 1] = bytes[bytes.length >> 1]! ^ 0x01;
      await Deno.writeFile(path, bytes);
    },
  },
  {
    name: "truncation",
    damage: async (path) => {
      await Deno.chmod(path, 0o644);
      await Deno.truncate(path, Math.floor((await Deno.stat(path)).size / 2));
    },
  },
];

/** Reads a stream to its end, returning what it emitted before any error, and the error. */
async function drain(
  stream: ReadableStream<Uint8Array>,
): Promise<{ emitted: Uint8Array; error: unknown }> {
  const pieces: Uint8Array[] = [];
  try {
    for await (const piece of stream) pieces.push(piece);
    return { emitted: concatBytes(pieces), error: null };
  } catch (error) {
    return { emitted: concatBytes(pieces), error };
  }
}

/** Every file in `dir` except the store's own folder. */
async function workspaceFiles(dir: string): Promise<string[]> {
  return (await listFiles(dir)).filter((p) => !p.startsWith("cas/"));
}

Deno.test("Cas reads detect damaged stored files and emit no corrupt bytes", async (t) => {
  await withTempDir(async (dir) => {
    const cas = await Cas.open(join(dir, "cas"));
    const small = pseudoRandomBytes(200_000, 1);
    const large = pseudoRandomBytes(9 * MiB, 2);
    const smallHash = sha256Hex(small);
    const largeHash = sha256Hex(large);
    const contents = [
      {
        description: "whole object",
        bytes: small,
        hash: smallHash,
        damaged: smallHash,
        goodPrefix: 0,
      },
    ];
    await cas.putBytes(large);
    const manifest = (await cas.manifest(largeHash))!;
    const second = manifest.chunks[1]!;
    contents.push({
      description: "second chunk",
      bytes: large,
      hash: largeHash,
      damaged: second.hash,
      goodPrefix: second.offset,
    });
    const readers: {
      name: string;
      read: (hash: string, bytes: Uint8Array, goodPrefix: number) => Promise<void>;
    }[] = [
      {
        name: "readBytes",
        read: async (hash) => {
          await assert.rejects(cas.readBytes(hash), CorruptContentError);
        },
      },
      {
        name: "readStream",
        read: async (hash, bytes, goodPrefix) => {
          const { emitted, error } = await drain(cas.readStream(hash));
          assert.ok(error instanceof CorruptContentError, `stream error: ${error}`);
          assert.equal(emitted.length, goodPrefix, "only the pieces before the damage");
          assertBytes(emitted, bytes.subarray(0, goodPrefix), "emitted");
        },
      },
      {
        name: "writeTo a new file",
        read: async (hash) => {
          const dest = join(dir, "new.bin");
          await assert.rejects(cas.writeTo(hash, dest), CorruptContentError);
          assert.deepEqual(await workspaceFiles(dir), ["keep.txt"]);
        },
      },
      {
        name: "writeTo over an existing file",
        read: async (hash) => {
          const dest = join(dir, "keep.txt");
          await assert.rejects(cas.writeTo(hash, dest, { mode: 0o100755 }), CorruptContentError);
          assert.equal(await Deno.readTextFile(dest), "untouched");
          assert.deepEqual(await workspaceFiles(dir), ["keep.txt"]);
        },
      },
    ];
    await Deno.writeTextFile(join(dir, "keep.txt"), "untouched");
    for (const { description, bytes, hash, damaged, goodPrefix } of contents) {
      for (const { name: damageName, damage } of DAMAGES) {
        for (const { name, read } of readers) {
          await t.step(`${description}, ${damageName}, ${name}`, async () => {
            await cas.putBytes(bytes);
            assert.equal(await cas.has(hash), true);
            await damage(objectFile(cas.root, damaged));
            await read(hash, bytes, goodPrefix);
            // The damaged file is gone, so the content reads as missing and can be fetched.
            assert.equal(await cas.has(damaged), false);
            assert.equal(await cas.has(hash), false);
            await assert.rejects(cas.readBytes(hash), ContentNotFoundError);
          });
        }
      }
    }
    await t.step("a missing chunk reads as not found, naming the chunk", async () => {
      await cas.putBytes(large);
      await Deno.remove(objectFile(cas.root, second.hash));
      const error = await cas.readBytes(largeHash).catch((e) => e);
      assert.ok(error instanceof ContentNotFoundError);
      assert.equal(error.hash, second.hash);
      assert.equal(
        await cas.objectSize(largeHash),
        large.length,
        "the manifest still tells the size",
      );
    });
    await t.step("a damaged manifest reads as corrupt and is removed", async () => {
      await cas.putBytes(large);
      const path = manifestFile(cas.root, largeHash);
      await Deno.chmod(path, 0o644);
      await Deno.writeTextFile(path, '{"total_size":1,');
      await assert.rejects(cas.readBytes(largeHash), CorruptContentError);
      assert.equal(await cas.has(largeHash), false);
      assert.equal(await cas.manifest(largeHash), null);
    });
    await t.step(
      "a manifest pointing at other valid chunks fails at the stream's end",
      async () => {
        await cas.putBytes(large);
        const other = await cas.putBytes(pseudoRandomBytes(5 * MiB, 3));
        const swapped = (await cas.manifest(other.hash))!;
        const path = manifestFile(cas.root, largeHash);
        await Deno.chmod(path, 0o644);
        await Deno.writeTextFile(path, JSON.stringify(swapped));
        const { error } = await drain(cas.readStream(largeHash));
        assert.ok(error instanceof CorruptContentError);
        assert.equal(error.actual, other.hash);
        await assert.rejects(cas.writeTo(largeHash, join(dir, "keep.txt")), CorruptContentError);
        assert.equal(await Deno.readTextFile(join(dir, "keep.txt")), "untouched");
      },
    );
    await t.step("writeTo of absent content leaves nothing behind", async () => {
      await assert.rejects(
        cas.writeTo("0".repeat(64), join(dir, "absent.bin")),
        ContentNotFoundError,
      );
      assert.deepEqual(await workspaceFiles(dir), ["keep.txt"]);
    });
    await t.step("writeTo into a missing folder fails and leaves nothing behind", async () => {
      await assert.rejects(
        cas.writeTo(smallHash, join(dir, "no", "such.bin")),
        Deno.errors.NotFound,
      );
      assert.deepEqual(await workspaceFiles(dir), ["keep.txt"]);
    });
  });
});

Deno.test("Cas.putVerified() stores only bytes that match the hash", async (t) => {
  await withTempDir(async (dir) => {
    const cas = await Cas.open(dir);
    const bytes = pseudoRandomBytes(10_000, 5);
    const hash = sha256Hex(bytes);
    await t.step("mismatched bytes are rejected and nothing is written", async () => {
      const other = pseudoRandomBytes(10_000, 6);
      const error = await cas.putVerified(hash, other).catch((e) => e);
      assert.ok(error instanceof CorruptContentError);
      assert.equal(error.hash, hash);
      assert.equal(error.actual, sha256Hex(other));
      assert.match(error.message, new RegExp(`"${hash}".*"${sha256Hex(other)}"`));
      assert.deepEqual(await cas.stats(), { objects: 0, manifests: 0, bytes: 0 });
      assert.deepEqual(await listFiles(dir), []);
    });
    await t.step("matching bytes are stored", async () => {
      await cas.putVerified(hash, bytes);
      assertBytes(await cas.readBytes(hash), bytes);
    });
    await t.step("a truncated stored copy is replaced by a verified put", async () => {
      await Deno.chmod(objectFile(dir, hash), 0o644);
      await Deno.truncate(objectFile(dir, hash), 10);
      await cas.putVerified(hash, bytes);
      assertBytes(await cas.readBytes(hash), bytes);
    });
  });
});

Deno.test("Cas.putManifest() records chunked content fetched chunk by chunk", async (t) => {
  await withTempDir(async (dir) => {
    const source = await Cas.open(join(dir, "source"));
    const target = await Cas.open(join(dir, "target"));
    const bytes = pseudoRandomBytes(11 * MiB, 8);
    const { hash } = await source.putBytes(bytes);
    const manifest = (await source.manifest(hash))!;
    assert.ok(manifest.chunks.length >= 4);
    const transfer = async (refs: { hash: string }[]) => {
      for (const ref of refs) await target.putVerified(ref.hash, await source.readBytes(ref.hash));
    };

    await t.step("every chunk is missing at first", async () => {
      assert.deepEqual(await target.missingChunks(manifest), manifest.chunks);
      assert.equal(await target.has(hash), false);
    });
    await t.step("missing chunks are rejected, naming one", async () => {
      await transfer(manifest.chunks.slice(0, 2));
      assert.deepEqual(await target.missingChunks(manifest), manifest.chunks.slice(2));
      const error = await target.putManifest(hash, manifest).catch((e) => e);
      assert.ok(error instanceof ContentNotFoundError);
      assert.equal(error.hash, manifest.chunks[2]!.hash);
      assert.equal(await target.manifest(hash), null);
    });
    await transfer(manifest.chunks.slice(2));
    const bad: { description: string; manifest: ChunkManifest; hash?: string }[] = [
      {
        description: "a gap between chunks",
        manifest: {
          ...manifest,
          chunks: manifest.chunks.map((c, i) => (i === 1 ? { ...c, offset: c.offset + 1 } : c)),
        },
      },
      {
        description: "sizes not adding up to total_size",
        manifest: { ...manifest, total_size: bytes.length + 1 },
      },
      {
        description: "a chunk's size misstated",
        manifest: {
          ...manifest,
          total_size: bytes.length - 1,
          chunks: manifest.chunks.map((
            c,
            i,
            all,
          ) => (i === all.length - 1 ? { ...c, size: c.size - 1 } : c)),
        },
      },
      {
        description: "chunks in the wrong order",
        manifest: {
          ...manifest,
          chunks: [manifest.chunks[1]!, manifest.chunks[0]!, ...manifest.chunks.slice(2)].map((
            c,
            i,
            all,
          ) => ({
            ...c,
            offset: all.slice(0, i).reduce((n, x) => n + x.size, 0),
          })),
        },
      },
      { description: "the wrong overall hash", manifest, hash: sha256Hex(new Uint8Array([1])) },
      {
        description: "a path for a chunk hash",
        manifest: { ...manifest, chunks: [{ hash: "../../x", offset: 0, size: bytes.length }] },
      },
    ];
    for (const { description, manifest: m, hash: h } of bad) {
      await t.step(`rejects ${description}`, async () => {
        await assert.rejects(target.putManifest(h ?? hash, m), CorruptContentError);
        assert.equal(await target.manifest(h ?? hash), null);
        assert.equal(await target.has(h ?? hash), false);
        assert.deepEqual(await target.missingChunks(manifest), [], "no chunk was discarded");
      });
    }
    await t.step("missingChunks() rejects a malformed manifest", async () => {
      await assert.rejects(target.missingChunks(bad.at(-1)!.manifest), TypeError);
    });
    await t.step("accepts the right manifest", async () => {
      await target.putManifest(hash, manifest);
      assert.equal(await target.has(hash), true);
      assert.deepEqual(await target.manifest(hash), manifest);
      assert.equal(await target.objectSize(hash), bytes.length);
      const dest = join(dir, "copy.bin");
      await target.writeTo(hash, dest);
      assertBytes(await Deno.readFile(dest), bytes);
    });
  });
});

Deno.test("Cas rejects malformed hash arguments with a TypeError", async (t) => {
  await withTempDir(async (dir) => {
    const cas = await Cas.open(dir);
    const manifest: ChunkManifest = { total_size: 0, chunk_size: 1, chunks: [] };
    const calls: { name: string; call: (hash: string) => Promise<unknown> }[] = [
      { name: "has", call: (h) => cas.has(h) },
      { name: "putVerified", call: (h) => cas.putVerified(h, new Uint8Array()) },
      { name: "putManifest", call: (h) => cas.putManifest(h, manifest) },
      { name: "manifest", call: (h) => cas.manifest(h) },
      { name: "readBytes", call: (h) => cas.readBytes(h) },
      { name: "readStream", call: (h) => Promise.resolve().then(() => cas.readStream(h)) },
      { name: "writeTo", call: (h) => cas.writeTo(h, join(dir, "x")) },
      { name: "objectSize", call: (h) => cas.objectSize(h) },
    ];
    const hashes = [
      { description: "path traversal", hash: "../x" },
      {
        description: "uppercase",
        hash: "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855",
      },
      { description: "short", hash: "e3b0c442" },
      { description: "empty", hash: "" },
      { description: "with a slash", hash: `ab/${"c".repeat(61)}` },
    ];
    for (const { description, hash } of hashes) {
      for (const { name, call } of calls) {
        await t.step(`${name} with ${description}`, async () => {
          const error = await call(hash).catch((e) => e);
          assert.ok(error instanceof TypeError, `${name}: ${error}`);
          assert.match(
            error.message,
            /^Invalid content hash ".*": expected 64 lowercase hex characters$/,
          );
        });
      }
    }
    await t.step("readStream throws at once", () => {
      assert.throws(() => cas.readStream("../x"), TypeError);
    });
    await t.step("nothing was created", async () => {
      assert.deepEqual(await listFiles(dir), []);
    });
  });
});

Deno.test("putManifest hashes only the whole, yet names and removes a chunk damaged since it was put", async () => {
  await withTempDir(async (dir) => {
    const source = await Cas.open(join(dir, "source"));
    const large = pseudoRandomBytes(6 * MiB, 21);
    const { hash } = await source.putBytes(large);
    const manifest = (await source.manifest(hash))!;
    const copy = async (name: string) => {
      const cas = await Cas.open(join(dir, name));
      for (const chunk of manifest.chunks) {
        await cas.putVerified(chunk.hash, await source.readBytes(chunk.hash), { deferSync: true });
      }
      return cas;
    };
    const intact = await copy("intact");
    await intact.putManifest(hash, manifest);
    assertBytes(await intact.readBytes(hash), large);

    const damaged = await copy("damaged");
    const victim = manifest.chunks[1]!.hash;
    await DAMAGES[0]!.damage(objectFile(damaged.root, victim)); // a flipped byte, same size
    let caught: unknown = null;
    try {
      await damaged.putManifest(hash, manifest);
    } catch (error) {
      caught = error;
    }
    assert.ok(caught instanceof CorruptContentError, `error: ${caught}`);
    assert.equal(caught.hash, victim, "the damaged chunk is named");
    await assert.rejects(
      damaged.putManifest(hash, manifest),
      ContentNotFoundError,
      "gone: fetched again",
    );
    assert.equal(await damaged.hasObject(victim), false);
    assert.equal(await damaged.manifest(hash), null, "no manifest recorded");
  });
});
