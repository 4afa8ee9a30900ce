/**
 * The CAS's layout as other areas see it (`casObjectPath`, `casManifestPath`) and the
 * verified copies of objects and manifests to and from a folder laid out like a store
 * (what checkpoints made with objects are).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  Cas,
  casManifestPath,
  casObjectPath,
  CHUNKING_THRESHOLD,
  ContentNotFoundError,
  CorruptContentError,
  sha256Hex,
} from "../../lib/cas/mod.ts";
import {
  assertBytes,
  listFiles,
  manifestFile,
  objectFile,
  pseudoRandomBytes,
  withTempDir,
} from "./_helpers.ts";

const HASH = "ab" + "0".repeat(62);

Deno.test("casObjectPath() and casManifestPath() give the fan-out layout", async (t) => {
  const table = [
    {
      description: "an object",
      input: () => casObjectPath(HASH),
      expected: `objects/ab/${HASH}`,
    },
    {
      description: "a manifest",
      input: () => casManifestPath(HASH),
      expected: `manifests/ab/${HASH}.json`,
    },
  ];
  for (const { description, input, expected } of table) {
    await t.step(description, () => assert.equal(input(), expected));
  }
});

Deno.test("the layout paths name the files the store writes", async () => {
  await withTempDir(async (dir) => {
    const cas = await Cas.open(join(dir, "cas"));
    const small = await cas.putBytes(new TextEncoder().encode("hello"));
    const large = await cas.putBytes(pseudoRandomBytes(CHUNKING_THRESHOLD + 1000, 7));
    assert.equal(join(cas.root, casObjectPath(small.hash)), objectFile(cas.root, small.hash));
    assert.ok((await Deno.stat(join(cas.root, casObjectPath(small.hash)))).isFile);
    assert.equal(join(cas.root, casManifestPath(large.hash)), manifestFile(cas.root, large.hash));
    assert.ok((await Deno.stat(join(cas.root, casManifestPath(large.hash)))).isFile);
  });
});

Deno.test("objects and manifests exported to a folder import into another store verified", async () => {
  await withTempDir(async (dir) => {
    const source = await Cas.open(join(dir, "a"));
    const target = await Cas.open(join(dir, "b"));
    const folder = join(dir, "copy");
    const smallBytes = new TextEncoder().encode("small content");
    const largeBytes = pseudoRandomBytes(2 * CHUNKING_THRESHOLD, 11);
    const small = await source.putBytes(smallBytes);
    const large = await source.putBytes(largeBytes);
    const manifest = (await source.manifest(large.hash))!;
    const chunks = [...new Set(manifest.chunks.map((ref) => ref.hash))];

    let bytes = await source.exportObject(small.hash, folder);
    for (const chunk of chunks) bytes += await source.exportObject(chunk, folder);
    bytes += await source.exportManifest(large.hash, folder);
    const files = await listFiles(folder);
    assert.deepEqual(
      files,
      [casObjectPath(small.hash), ...chunks.map(casObjectPath), casManifestPath(large.hash)]
        .sort(),
    );
    let total = 0;
    for (const file of files) total += (await Deno.stat(join(folder, file))).size;
    assert.equal(bytes, total, "the bytes reported are the bytes written");

    await assert.rejects(
      target.importManifest(folder, large.hash),
      ContentNotFoundError,
      "a manifest is recorded only once its chunks are stored",
    );
    assert.equal(await target.importObject(folder, small.hash), true);
    for (const chunk of chunks) assert.equal(await target.importObject(folder, chunk), true);
    assert.equal(await target.importManifest(folder, large.hash), true);
    assertBytes(await target.readBytes(small.hash), smallBytes, "small content");
    assertBytes(await target.readBytes(large.hash), largeBytes, "chunked content");
  });
});

Deno.test("what a folder lacks is reported, and nothing is written over", async () => {
  await withTempDir(async (dir) => {
    const cas = await Cas.open(join(dir, "cas"));
    const folder = join(dir, "copy");
    await Deno.mkdir(folder);
    assert.equal(await cas.importObject(folder, HASH), false);
    assert.equal(await cas.importManifest(folder, HASH), false);
    await assert.rejects(cas.exportObject(HASH, folder), ContentNotFoundError);
    await assert.rejects(cas.exportManifest(HASH, folder), ContentNotFoundError);
    const { hash } = await cas.putBytes(new TextEncoder().encode("once"));
    await cas.exportObject(hash, folder);
    await assert.rejects(cas.exportObject(hash, folder), Deno.errors.AlreadyExists);
    await assert.rejects(cas.importObject(folder, "not a hash"), TypeError);
  });
});

Deno.test("damaged objects and manifests in a folder are refused and not stored", async (t) => {
  await withTempDir(async (dir) => {
    const source = await Cas.open(join(dir, "a"));
    const folder = join(dir, "copy");
    const good = new TextEncoder().encode("the real bytes");
    const { hash } = await source.putBytes(good);
    const large = await source.putBytes(pseudoRandomBytes(CHUNKING_THRESHOLD + 10, 3));
    await source.exportObject(hash, folder);
    await source.exportManifest(large.hash, folder);
    await Deno.writeTextFile(join(folder, casObjectPath(hash)), "other bytes");
    await Deno.writeTextFile(join(folder, casManifestPath(large.hash)), "{not json");

    await t.step("an object that hashes to something else", async () => {
      const target = await Cas.open(join(dir, "b"));
      const error = await target.importObject(folder, hash).then(
        () => assert.fail("imported damaged bytes"),
        (error: unknown) => error,
      );
      assert.ok(error instanceof CorruptContentError);
      assert.equal(error.actual, sha256Hex(new TextEncoder().encode("other bytes")));
      assert.equal(await target.has(hash), false);
    });
    await t.step("a manifest that is not JSON", async () => {
      const target = await Cas.open(join(dir, "c"));
      await assert.rejects(target.importManifest(folder, large.hash), CorruptContentError);
      assert.equal(await target.has(large.hash), false);
    });
  });
});
