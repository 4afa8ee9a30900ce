/**
 * RowReadAhead reads a fetched content and those queued after it from a real CAS (rows in
 * a real SQLite database, and files) in one read; each read-ahead content serves once.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Cas, sha256Hex, SMALL_OBJECT_LIMIT } from "../../lib/cas/mod.ts";
import { RowReadAhead } from "../../lib/replication/row_read_ahead.ts";
import { Store } from "../../lib/store/mod.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

function bytesOf(size: number, seed: number): Uint8Array {
  return Uint8Array.from({ length: size }, (_, i) => (i * 31 + seed) & 0xff);
}

Deno.test("RowReadAhead reads the next queued rows with the one asked for; each serves one answer", async (t) => {
  await withTempDir(async (dir) => {
    const store = Store.open(join(dir, "db"));
    try {
      const cas = await Cas.open(join(dir, "cas"), { db: store.db });
      const rows = [1, 2, 3, 4].map((seed) => bytesOf(5000 + seed, seed));
      const file = bytesOf(SMALL_OBJECT_LIMIT + 1, 9);
      for (const bytes of [...rows, file]) await cas.putBytes(bytes);
      const [a, b, c, d] = rows.map(sha256Hex) as [string, string, string, string];
      const readAhead = new RowReadAhead(cas);
      const max = 1_000_000;
      await t.step("the one asked for is read with the next ones", () => {
        assert.deepEqual(readAhead.take(a, [b, c, sha256Hex(file)], max), rows[0]);
        // Gone from the table now: only what was read ahead can still be answered.
        store.db.exec("DELETE FROM cas_objects");
      });
      await t.step("a read-ahead row serves the next answer, once", () => {
        assert.deepEqual(readAhead.take(b, [], max), rows[1]);
        assert.equal(readAhead.take(b, [], max), undefined);
      });
      await t.step("one larger than the answer may carry is left to its own read", () => {
        assert.equal(readAhead.take(c, [], 5000), undefined);
      });
      await t.step("a file, or a row not queued when read, is not read ahead", () => {
        assert.equal(readAhead.take(sha256Hex(file), [], max), undefined);
        assert.equal(readAhead.take(d, [], max), undefined);
      });
    } finally {
      store.close();
    }
  });
});

Deno.test("RowReadAhead holds a bounded number of contents, dropping the oldest", async () => {
  await withTempDir(async (dir) => {
    const store = Store.open(join(dir, "db"));
    try {
      const cas = await Cas.open(join(dir, "cas"), { db: store.db });
      const hashes: string[] = [];
      for (let i = 0; i < 100; i++) hashes.push((await cas.putBytes(bytesOf(100, i))).hash);
      const readAhead = new RowReadAhead(cas);
      // Four reads ahead of 25 each: 96 held before the bound.
      for (let at = 0; at < 100; at += 25) {
        readAhead.take(hashes[at]!, hashes.slice(at + 1, at + 25), 1000);
      }
      store.db.exec("DELETE FROM cas_objects");
      const served = hashes.filter((hash) => readAhead.take(hash, [], 1000) !== undefined);
      // 96 read ahead, not asked for: at most 64 held, the newest.
      assert.ok(served.length > 48 && served.length <= 64, `${served.length} held`);
      assert.deepEqual(served, hashes.filter((_, i) => i % 25 !== 0).slice(-served.length));
    } finally {
      store.close();
    }
  });
});
