import assert from "node:assert/strict";
import { join } from "node:path";
import { Cas, CHUNKING_THRESHOLD, HashPrefixSet, sha256Hex } from "../../lib/cas/mod.ts";
import { openDatabase } from "../../lib/db/mod.ts";
import { listFiles, manifestFile, objectFile, pseudoRandomBytes, withTempDir } from "./_helpers.ts";

const MiB = 1024 * 1024;
const HOUR = 3600_000;

/** Sets every stored file's mtime an hour back, as if written long before the sweep. */
async function ageAll(root: string): Promise<void> {
  const past = new Date(Date.now() - HOUR);
  for (const rel of await listFiles(root)) await Deno.utime(join(root, rel), past, past);
}

Deno.test("Cas.sweep() removes unreachable content and keeps chunks of kept manifests", async (t) => {
  await withTempDir(async (root) => {
    const cas = await Cas.open(root);
    const a = await cas.putBytes(pseudoRandomBytes(1000, 1));
    const c = await cas.putBytes(pseudoRandomBytes(2000, 2));
    const bBytes = pseudoRandomBytes(10 * MiB, 3);
    const b = await cas.putBytes(bBytes);
    const dBytes = bBytes.slice();
    dBytes[5 * MiB] = dBytes[5 * MiB]! ^ 0xff;
    const d = await cas.putBytes(dBytes);
    const bChunks = new Set((await cas.manifest(b.hash))!.chunks.map((r) => r.hash));
    const dChunks = new Set((await cas.manifest(d.hash))!.chunks.map((r) => r.hash));
    const bOnly = [...bChunks].filter((h) => !dChunks.has(h));
    assert.ok(bOnly.length >= 1 && bOnly.length < bChunks.size, "b and d share most chunks");
    await ageAll(root);

    await t.step("content written or re-put after keepNewerThan survives", async () => {
      // A second of margin: file times come from a coarser clock than Date.now().
      const started = Date.now() - 1000;
      const e = await cas.putBytes(pseudoRandomBytes(500, 4));
      await cas.putBytes(pseudoRandomBytes(2000, 2)); // c again: freshened, not rewritten
      const result = await cas.sweep(new Set([a.hash, b.hash, d.hash]), { keepNewerThan: started });
      assert.deepEqual(result, { removedObjects: 0, removedBytes: 0 });
      assert.equal(await cas.has(e.hash), true);
      assert.equal(await cas.has(c.hash), true);
      await ageAll(root);
    });
    await t.step(
      "keeps a, d and d's chunks; removes c, b's manifest and b-only chunks",
      async () => {
        const before = await cas.stats();
        const cSize = (await Deno.stat(objectFile(root, c.hash))).size;
        const bManifestSize = (await Deno.stat(manifestFile(root, b.hash))).size;
        let bOnlyBytes = 0;
        for (const h of bOnly) bOnlyBytes += (await Deno.stat(objectFile(root, h))).size;
        // Kept as the daemon keeps them: by prefix (HashPrefixSet).
        const keep = new HashPrefixSet().add(a.hash).add(d.hash).add("").add("not a hash");
        const result = await cas.sweep(keep);
        // c, the extra small object e, b's manifest and b's own chunks.
        const eSize = 500;
        assert.deepEqual(result, {
          removedObjects: 2 + 1 + bOnly.length,
          removedBytes: cSize + eSize + bManifestSize + bOnlyBytes,
        });
        assert.equal(await cas.has(a.hash), true);
        assert.equal(await cas.has(d.hash), true);
        assert.equal(sha256Hex(await cas.readBytes(d.hash)), d.hash);
        assert.equal(await cas.has(b.hash), false);
        assert.equal(await cas.has(c.hash), false);
        for (const h of bOnly) assert.equal(await cas.has(h), false);
        const after = await cas.stats();
        assert.equal(after.objects, before.objects - 2 - bOnly.length);
        assert.equal(after.manifests, 1);
        assert.equal(after.bytes, before.bytes - result.removedBytes);
      },
    );
    await t.step("a recent manifest keeps its older chunks", async () => {
      await ageAll(root);
      const now = new Date();
      await Deno.utime(manifestFile(root, d.hash), now, now);
      await cas.sweep(new Set(), { keepNewerThan: now.getTime() - 60_000 });
      assert.equal(await cas.has(d.hash), true);
      assert.equal(await cas.has(a.hash), false);
    });
    await t.step("keepNewerThan protects files written after the given time", async () => {
      await ageAll(root);
      const result = await cas.sweep(new Set(), { keepNewerThan: Date.now() - 2 * HOUR });
      assert.deepEqual(result, { removedObjects: 0, removedBytes: 0 });
      await cas.sweep(new Set());
      assert.deepEqual(await cas.stats(), { objects: 0, manifests: 0, bytes: 0 });
    });
  });
});

Deno.test("Cas.open() removes temp files left unwritten for an hour by other processes, and unparseable ones; keeps its own and recent ones", async () => {
  await withTempDir(async (root) => {
    await Cas.open(root);
    const tmp = join(root, "tmp");
    const names = {
      stale: "4242-1b2c.tmp",
      junk: "junk.tmp",
      own: `${Deno.pid}-3d4e.tmp`,
      ownOld: `${Deno.pid}-7a8b.tmp`,
      recent: "4242-5f6a.tmp",
    };
    for (const name of Object.values(names)) await Deno.writeTextFile(join(tmp, name), "partial");
    await Deno.mkdir(join(tmp, "stray-folder"));
    const hoursAgo = new Date(Date.now() - 61 * 60 * 1000);
    for (const name of [names.stale, names.junk, names.ownOld, "stray-folder"]) {
      await Deno.utime(join(tmp, name), hoursAgo, hoursAgo);
    }
    await Cas.open(root);
    assert.deepEqual(await listFiles(tmp), [names.own, names.ownOld, names.recent].sort());
    assert.deepEqual([...Deno.readDirSync(tmp)].length, 3);
  });
});

Deno.test("Cas.claimTempFiles() removes at once what an earlier holder of the data folder's lock left, and names its own temp files as the holder's", async () => {
  await withTempDir(async (root) => {
    const cas = await Cas.open(root);
    const tmp = join(root, "tmp");
    // The format the doc of HOLDER_TEMP_PREFIX gives: held-<tag of the data folder>-<pid>-….
    const tag = (dataDir: string) => sha256Hex(new TextEncoder().encode(dataDir)).slice(0, 8);
    const names = {
      deadHolder: `held-${tag("/data/a")}-4242-1b2c.tmp`, // just written, by a killed daemon
      otherFolder: `held-${tag("/data/b")}-4243-1b2c.tmp`, // a store shared with /data/b
      otherProcess: "4244-5f6a.tmp", // a CLI command writing now
    };
    for (const name of Object.values(names)) await Deno.writeTextFile(join(tmp, name), "partial");
    assert.equal(await cas.claimTempFiles("/data/a"), 1);
    assert.deepEqual(await listFiles(tmp), [names.otherFolder, names.otherProcess].sort());
    const own = cas.tempPath().slice(tmp.length + 1);
    assert.ok(own.startsWith(`held-${tag("/data/a")}-${Deno.pid}-`), own);
    // Another process's open of the store keeps a live holder's recent temp file.
    await Deno.writeTextFile(join(tmp, own), "partial");
    await Cas.open(root);
    assert.ok((await listFiles(tmp)).includes(own));
  });
});

Deno.test("Cas.open() rejects an empty root and creates the layout", async () => {
  await assert.rejects(Cas.open(""), TypeError);
  await withTempDir(async (dir) => {
    const cas = await Cas.open(join(dir, "a", "b"));
    assert.equal(cas.root, join(dir, "a", "b"));
    const names = [...Deno.readDirSync(cas.root)].map((e) => e.name).sort();
    assert.deepEqual(names, ["manifests", "objects", "tmp"]);
  });
});

Deno.test("Cas.dropChunked() removes chunked contents and the chunks only they use, never what is kept", async () => {
  await withTempDir(async (root) => {
    const db = openDatabase(join(root, "store.db"));
    try {
      // Small objects (a content's last chunk too) go to the database's table.
      const cas = await Cas.open(join(root, "cas"), { db });
      const whole = pseudoRandomBytes(8 * MiB, 41);
      const wholeHash = (await cas.putBytes(whole)).hash;
      const wholeChunks = (await cas.manifest(wholeHash))!.chunks;
      // Cut 1,000 bytes past one of its chunk boundaries beyond 4 MiB: the same chunks up to
      // there, then a last chunk small enough for a row.
      const boundary = wholeChunks.find((chunk) => chunk.offset >= CHUNKING_THRESHOLD)!.offset;
      const cut = whole.slice(0, boundary + 1000);
      const cutHash = (await cas.putBytes(cut)).hash;
      const cutChunks = (await cas.manifest(cutHash))!.chunks;
      const tail = cutChunks.at(-1)!;
      assert.equal(tail.size, 1000);
      assert.equal(await cas.hasObject(tail.hash), true);
      const other = await cas.putBytes(pseudoRandomBytes(5 * MiB, 42));

      const none = () => new Set<string>();
      // The cut content goes, with its last chunk; the chunks the whole one lists stay.
      let result = await cas.dropChunked([cutHash], none);
      assert.equal(result.removedObjects, 2); // its manifest and its last chunk's row
      assert.equal(await cas.manifest(cutHash), null);
      assert.equal(await cas.hasObject(tail.hash), false);
      for (const chunk of cutChunks.slice(0, -1)) {
        assert.equal(await cas.hasObject(chunk.hash), true);
      }
      assert.equal(sha256Hex(await cas.readBytes(wholeHash)), wholeHash);

      // A content named kept stays whole; a chunk named kept (a content of its own) stays.
      result = await cas.dropChunked([other.hash], (asked) => new Set(asked));
      assert.deepEqual(result, { removedObjects: 0, removedBytes: 0 });
      assert.notEqual(await cas.manifest(other.hash), null);
      const keptChunk = wholeChunks[1]!.hash;
      const asked: string[][] = [];
      result = await cas.dropChunked([wholeHash, "f".repeat(64)], (hashes) => {
        asked.push(hashes);
        return new Set(hashes.filter((hash) => hash === keptChunk));
      });
      assert.deepEqual(asked[0], [wholeHash]); // the chunked contents first: none stored whole
      assert.deepEqual(new Set(asked[1]), new Set(wholeChunks.map((chunk) => chunk.hash)));
      assert.equal(result.removedObjects, wholeChunks.length); // its manifest, its chunks but one
      assert.equal(await cas.hasObject(keptChunk), true);
      for (const chunk of wholeChunks) {
        if (chunk.hash !== keptChunk) assert.equal(await cas.hasObject(chunk.hash), false);
      }
      assert.equal((await cas.stats()).manifests, 1); // the other content's, kept
      assert.equal(sha256Hex(await cas.readBytes(other.hash)), other.hash);
    } finally {
      db.close();
    }
  });
});
