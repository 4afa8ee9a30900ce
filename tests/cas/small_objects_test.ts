import assert from "node:assert/strict";
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import {
  Cas,
  casObjectPath,
  CHUNKING_THRESHOLD,
  ContentNotFoundError,
  CorruptContentError,
  sha256Hex,
  SMALL_OBJECT_LIMIT,
} from "../../lib/cas/mod.ts";
import { inTransaction, openDatabase } from "../../lib/db/mod.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import { assertBytes, listFiles, pseudoRandomBytes, withTempDir } from "./_helpers.ts";

/** Waits for the clock to pass `ms` (epoch), for timestamps that must differ; returns now. */
async function laterThan(ms: number): Promise<number> {
  await waitFor("a later millisecond", () => Date.now() > ms);
  return Date.now();
}

/** Runs `body` with a CAS at `<root>/cas` whose small objects go to `<root>/store.db`. */
function withDbCas(
  body: (cas: Cas, db: DatabaseSync, root: string) => Promise<void>,
): Promise<void> {
  return withTempDir(async (root) => {
    const db = openDatabase(join(root, "store.db"));
    try {
      await body(await Cas.open(join(root, "cas"), { db }), db, root);
    } finally {
      db.close();
    }
  });
}

function rowCount(db: DatabaseSync): number {
  return (db.prepare("SELECT count(*) AS n FROM cas_objects").get() as { n: number }).n;
}

Deno.test("small objects go to the database table, larger ones to files", () =>
  withDbCas(async (cas, db, root) => {
    const sizes = [0, 1, 4096, SMALL_OBJECT_LIMIT - 1, SMALL_OBJECT_LIMIT, 200_000];
    const stored = [];
    for (const [i, size] of sizes.entries()) {
      const bytes = pseudoRandomBytes(size, i + 1);
      stored.push({ bytes, ...await cas.putBytes(bytes) });
    }
    assert.equal(rowCount(db), 4, "the four objects under the limit are rows");
    assert.equal((await listFiles(join(root, "cas", "objects"))).length, 2, "two files");
    for (const { bytes, hash, size } of stored) {
      assertBytes(await cas.readBytes(hash), bytes, `content of ${size} bytes`);
      assert.equal(await cas.has(hash), true);
      assert.equal(await cas.objectSize(hash), size);
    }
    const stats = await cas.stats();
    assert.equal(stats.objects, 6);
    assert.equal(stats.bytes, sizes.reduce((sum, size) => sum + size, 0));
  }));

Deno.test("a small object put twice is one row; writeTo with bytes stores it as a row once synced", () =>
  withDbCas(async (cas, db, root) => {
    const bytes = new TextEncoder().encode("hello, table");
    const first = await cas.putBytes(bytes);
    await cas.putBytes(bytes);
    assert.equal(rowCount(db), 1);
    const other = new TextEncoder().encode("written and stored");
    await cas.writeTo(sha256Hex(other), join(root, "out.txt"), { bytes: other });
    assert.equal(await Deno.readTextFile(join(root, "out.txt")), "written and stored");
    assert.equal(rowCount(db), 1, "stored with a deferred sync");
    await cas.syncDeferred();
    assert.equal(rowCount(db), 2);
    assert.equal(await cas.has(first.hash), true);
  }));

Deno.test("a corrupt row is never served: read fails, the row is removed, has() turns false", () =>
  withDbCas(async (cas, db) => {
    const { hash } = await cas.putBytes(new TextEncoder().encode("precious"));
    db.prepare("UPDATE cas_objects SET bytes = ? WHERE hash = ?").run(
      new TextEncoder().encode("tampered"),
      hash,
    );
    await assert.rejects(cas.readBytes(hash), CorruptContentError);
    assert.equal(await cas.has(hash), false);
    await assert.rejects(cas.readBytes(hash), ContentNotFoundError);
  }));

Deno.test("sweep removes unreferenced rows stored before the cutoff and keeps the rest", () =>
  withDbCas(async (cas, db) => {
    const kept = await cas.putBytes(new TextEncoder().encode("kept"));
    const dropped = await cas.putBytes(new TextEncoder().encode("dropped"));
    const cutoff = Date.now() + 1;
    await laterThan(cutoff);
    const fresh = await cas.putBytes(new TextEncoder().encode("stored after the cutoff"));
    const result = await cas.sweep(new Set([kept.hash]), { keepNewerThan: cutoff });
    assert.equal(result.removedObjects, 1);
    assert.equal(result.removedBytes, "dropped".length);
    assert.equal(await cas.has(kept.hash), true);
    assert.equal(await cas.has(dropped.hash), false);
    assert.equal(await cas.has(fresh.hash), true);
    assert.equal(rowCount(db), 2);
  }));

Deno.test("a put during a sweep's window keeps its row (stored_at is refreshed)", () =>
  withDbCas(async (cas) => {
    const bytes = new TextEncoder().encode("re-put after the cutoff");
    const { hash } = await cas.putBytes(bytes);
    const cutoff = await laterThan(Date.now());
    await laterThan(cutoff);
    await cas.putBytes(bytes); // referenced again after keep was computed without it
    const result = await cas.sweep(new Set(), { keepNewerThan: cutoff });
    assert.equal(result.removedObjects, 0);
    assert.equal(await cas.has(hash), true);
  }));

Deno.test("objects stored as files before the table existed stay readable", () =>
  withTempDir(async (root) => {
    const bytes = new TextEncoder().encode("from an older Chronicle");
    const { hash } = await (await Cas.open(join(root, "cas"))).putBytes(bytes);
    const db = openDatabase(join(root, "store.db"));
    try {
      const cas = await Cas.open(join(root, "cas"), { db });
      assertBytes(await cas.readBytes(hash), bytes);
      assert.equal(await cas.objectSize(hash), bytes.length);
      // Unreferenced, it is swept from the folder as before.
      const result = await cas.sweep(new Set(), { keepNewerThan: Date.now() + 1 });
      assert.equal(result.removedObjects, 1);
      assert.equal(await cas.has(hash), false);
    } finally {
      db.close();
    }
  }));

Deno.test("with a read-only database, rows are read and new objects go to files", () =>
  withTempDir(async (root) => {
    const path = join(root, "store.db");
    const writer = openDatabase(path);
    const inRow = new TextEncoder().encode("in a row");
    const { hash: rowHash } = await (await Cas.open(join(root, "cas"), { db: writer }))
      .putBytes(inRow);
    writer.close();
    const reader = openDatabase(path, { readOnly: true });
    try {
      const cas = await Cas.open(join(root, "cas"), { db: reader });
      assertBytes(await cas.readBytes(rowHash), inRow);
      const { hash } = await cas.putBytes(new TextEncoder().encode("new, as a file"));
      assert.deepEqual(await listFiles(join(root, "cas", "objects")), [
        `${hash.slice(0, 2)}/${hash}`,
      ]);
    } finally {
      reader.close();
    }
  }));

Deno.test("a read-only database without the table is used as none", () =>
  withTempDir(async (root) => {
    const path = join(root, "plain.db");
    openDatabase(path).close();
    const reader = openDatabase(path, { readOnly: true });
    try {
      const cas = await Cas.open(join(root, "cas"), { db: reader });
      const { hash } = await cas.putBytes(new TextEncoder().encode("a file"));
      assert.equal(await cas.has(hash), true);
      assert.equal((await cas.stats()).objects, 1);
    } finally {
      reader.close();
    }
  }));

Deno.test("small objects put with deferSync are readable at once and committed together by syncDeferred()", () =>
  withDbCas(async (cas, db, root) => {
    const contents = Array.from({ length: 20 }, (_, i) => new TextEncoder().encode(`row ${i}`));
    for (const bytes of contents) {
      await cas.putVerified(sha256Hex(bytes), bytes, { deferSync: true });
    }
    for (const bytes of contents) {
      assertBytes(await cas.readBytes(sha256Hex(bytes)), bytes);
      assert.equal(await cas.objectSize(sha256Hex(bytes)), bytes.length);
    }
    assert.equal(rowCount(db), 0, "nothing committed yet");
    const other = await Cas.open(join(root, "cas"), { db });
    assert.equal(await other.has(sha256Hex(contents[0]!)), false, "not durable, not shared");
    await cas.syncDeferred();
    assert.equal(rowCount(db), 20);
    assert.equal(await other.has(sha256Hex(contents[0]!)), true);
  }));

Deno.test("writeHeldRows() commits held rows with the caller's transaction, and keeps them when it rolls back", () =>
  withDbCas(async (cas, db, root) => {
    const bytes = (i: number) => new TextEncoder().encode(`held row ${i}`);
    for (let i = 0; i < 3; i++) {
      await cas.putVerified(sha256Hex(bytes(i)), bytes(i), { deferSync: true });
    }
    assert.throws(() => cas.writeHeldRows(), /inside a transaction/, "only inside a transaction");
    // Rolled back: nothing committed, every row still held and readable.
    assert.throws(() =>
      inTransaction(db, () => {
        cas.writeHeldRows();
        throw new Error("the record failed");
      }), /the record failed/);
    assert.equal(rowCount(db), 0);
    for (let i = 0; i < 3; i++) assertBytes(await cas.readBytes(sha256Hex(bytes(i))), bytes(i));
    // Committed with the caller's own row: one transaction; forgotten only afterwards.
    db.exec("CREATE TABLE refs (hash TEXT)");
    const forget = inTransaction(db, () => {
      const forget = cas.writeHeldRows();
      db.prepare("INSERT INTO refs (hash) VALUES (?)").run(sha256Hex(bytes(0)));
      return forget;
    });
    assert.equal(rowCount(db), 3);
    const other = await Cas.open(join(root, "cas"), { db });
    assert.equal(await other.has(sha256Hex(bytes(2))), true, "committed, seen by another");
    // A row held again between the write and the forget stays held for the next commit.
    await cas.putVerified(sha256Hex(bytes(3)), bytes(3), { deferSync: true });
    forget();
    assert.equal(rowCount(db), 3);
    await cas.syncDeferred();
    assert.equal(rowCount(db), 4);
  }));

Deno.test("writeHeldRows(only) commits just the rows named, and keeps the others held until their own commit", () =>
  withDbCas(async (cas, db, root) => {
    const bytes = (i: number) => new TextEncoder().encode(`held row ${i}`);
    for (let i = 0; i < 3; i++) {
      await cas.putVerified(sha256Hex(bytes(i)), bytes(i), { deferSync: true });
    }
    const forget = inTransaction(db, () => cas.writeHeldRows(new Set([sha256Hex(bytes(1))])));
    forget();
    assert.equal(rowCount(db), 1, "only the row named");
    const other = await Cas.open(join(root, "cas"), { db });
    assert.equal(await other.has(sha256Hex(bytes(1))), true, "committed, seen by another");
    assert.equal(await other.has(sha256Hex(bytes(0))), false, "still held, not committed");
    for (let i = 0; i < 3; i++) assertBytes(await cas.readBytes(sha256Hex(bytes(i))), bytes(i));
    inTransaction(db, () => cas.writeHeldRows(new Set([sha256Hex(bytes(0))])))();
    assert.equal(rowCount(db), 2);
    await cas.syncDeferred();
    assert.equal(rowCount(db), 3, "the last one with the next commit of every held row");
  }));

Deno.test("a held row is read back as put; bytes that do not hash to their name are never held", () =>
  withDbCas(async (cas, db) => {
    const a = new TextEncoder().encode("row a");
    const b = new TextEncoder().encode("row b");
    await cas.putVerified(sha256Hex(a), a, { deferSync: true });
    await cas.putVerified(sha256Hex(b), b, { deferSync: true });
    assertBytes(await cas.readBytes(sha256Hex(a)), a);
    assertBytes(await cas.readBytes(sha256Hex(b)), b);
    await assert.rejects(
      cas.putVerified(sha256Hex(a), b, { deferSync: true }),
      CorruptContentError,
      "bytes that do not hash to the name are never held",
    );
    assertBytes(await cas.readBytes(sha256Hex(a)), a);
    await cas.syncDeferred();
    assert.equal(rowCount(db), 2);
  }));

Deno.test("readWholeWithin() answers each hash its own bytes (row, held row, file), its size past the limit, null when not whole", () =>
  withDbCas(async (cas, db) => {
    const row = pseudoRandomBytes(3000, 11);
    const held = pseudoRandomBytes(5000, 12);
    const file = pseudoRandomBytes(SMALL_OBJECT_LIMIT + 10, 13);
    const chunked = pseudoRandomBytes(CHUNKING_THRESHOLD + 10, 14);
    await cas.putBytes(row);
    await cas.putVerified(sha256Hex(held), held, { deferSync: true });
    await cas.putBytes(file);
    const { hash: chunkedHash } = await cas.putBytes(chunked);
    for (const bytes of [row, held, file]) {
      const answer = await cas.readWholeWithin(sha256Hex(bytes), bytes.length);
      assert.ok(answer instanceof Uint8Array);
      assertBytes(answer, bytes, `${bytes.length} bytes`);
      assert.deepEqual(await cas.readWholeWithin(sha256Hex(bytes), bytes.length - 1), {
        tooLarge: bytes.length,
      });
    }
    assert.equal(await cas.readWholeWithin(chunkedHash, Infinity), null, "chunked: not whole");
    assert.equal(await cas.readWholeWithin("0".repeat(64), Infinity), null, "absent");
    // A committed row gone bad is never answered: the read fails and the row goes.
    db.prepare("UPDATE cas_objects SET bytes = ? WHERE hash = ?").run(
      new Uint8Array(3000),
      sha256Hex(row),
    );
    await assert.rejects(cas.readWholeWithin(sha256Hex(row), Infinity), CorruptContentError);
    assert.equal(await cas.readWholeWithin(sha256Hex(row), Infinity), null);
  }));

Deno.test("readSmallWithin() reads rows together, verified: files, larger, absent and corrupt rows are left out", () =>
  withDbCas(async (cas, db) => {
    const rows = [1, 2, 3].map((seed) => pseudoRandomBytes(1000 * seed, 20 + seed));
    const held = pseudoRandomBytes(2000, 30);
    const large = pseudoRandomBytes(9000, 31);
    const file = pseudoRandomBytes(SMALL_OBJECT_LIMIT + 10, 32);
    for (const bytes of [...rows, large, file]) await cas.putBytes(bytes);
    await cas.putVerified(sha256Hex(held), held, { deferSync: true });
    const corrupt = rows[2]!;
    db.prepare("UPDATE cas_objects SET bytes = ? WHERE hash = ?").run(
      new Uint8Array(corrupt.length),
      sha256Hex(corrupt),
    );
    const asked = [...rows, held, large, file].map(sha256Hex);
    const read = (inside: boolean) =>
      inside ? inTransaction(db, () => cas.readSmallWithin(asked, 8000)) : cas.readSmallWithin(
        [...asked, "0".repeat(64), "not a hash"],
        8000,
      );
    for (const inside of [false, true]) {
      const found = read(inside);
      assert.deepEqual(
        [...found.keys()].sort(),
        [rows[0]!, rows[1]!, held].map(sha256Hex).sort(),
        `inside a transaction: ${inside}`,
      );
      for (const [hash, bytes] of found) assert.equal(sha256Hex(bytes), hash);
      assert.equal(db.isTransaction, false, "no transaction is left open");
    }
    // The corrupt row is left for the single read, which fails and removes it.
    await assert.rejects(cas.readWholeWithin(sha256Hex(corrupt), Infinity), CorruptContentError);
    assert.equal(await cas.readWholeWithin(sha256Hex(corrupt), Infinity), null);
  }));

Deno.test("deferred small objects past 16 MiB are committed without waiting for syncDeferred()", () =>
  withDbCas(async (cas, db) => {
    for (let i = 0; i < 300; i++) {
      const bytes = pseudoRandomBytes(60 * 1024, 500 + i); // 300 x 60 KiB: over 17 MiB
      await cas.putVerified(sha256Hex(bytes), bytes, { deferSync: true });
    }
    assert.ok(rowCount(db) > 0, "held bytes stay bounded: rows were committed early");
    await cas.syncDeferred();
    assert.equal(rowCount(db), 300);
  }));

/** A folder on another mount than the temp folder, when the machine has one (tmpfs). */
function otherMount(): string | null {
  try {
    const shm = Deno.statSync("/dev/shm");
    const temp = Deno.env.get("TMPDIR") ?? "/tmp";
    return shm.isDirectory && shm.dev !== Deno.statSync(temp).dev ? "/dev/shm" : null;
  } catch {
    return null;
  }
}
const OTHER_MOUNT = otherMount();

Deno.test({
  name: "writeTo with tempInStore falls back to a temp file beside a destination on another mount",
  ignore: OTHER_MOUNT === null,
  fn: () =>
    withDbCas(async (cas) => {
      const bytes = new TextEncoder().encode("across mounts");
      const dir = await Deno.makeTempDir({ dir: OTHER_MOUNT! });
      try {
        await cas.writeTo(sha256Hex(bytes), join(dir, "out.txt"), { bytes, tempInStore: true });
        assert.equal(await Deno.readTextFile(join(dir, "out.txt")), "across mounts");
        assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["out.txt"]);
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    }),
});

Deno.test("readRange reads a slice of a row or of a file, unverified, and nothing of chunked or absent content", () =>
  withDbCas(async (cas, db) => {
    const rowBytes = pseudoRandomBytes(20_000, 1);
    const fileBytes = pseudoRandomBytes(300_000, 2);
    const row = await cas.putBytes(rowBytes);
    const file = await cas.putBytes(fileBytes);
    const chunked = await cas.putBytes(pseudoRandomBytes(CHUNKING_THRESHOLD + 10, 3));
    assert.equal(rowCount(db), 1, "the small one is a row");
    const fromRow = cas.readRange(row.hash, 1_000, 500)!;
    assertBytes(fromRow.bytes, rowBytes.subarray(1_000, 1_500));
    assert.equal(fromRow.size, 20_000);
    const fromFile = cas.readRange(file.hash, 299_000, 5_000)!;
    assertBytes(fromFile.bytes, fileBytes.subarray(299_000), "fewer at the end");
    assert.equal(fromFile.size, 300_000);
    assert.equal(fromFile.bytes.buffer.byteLength, 1_000, "only the slice is held");
    assert.equal(cas.readRange(file.hash, 300_000, 10)!.bytes.length, 0, "past the end");
    assert.equal(cas.readRange(chunked.hash, 0, 10), null, "chunked: not stored whole");
    assert.equal(cas.readRange("ab".repeat(32), 0, 10), null);
    assert.throws(() => cas.readRange("not a hash", 0, 10));
  }));

Deno.test("readContentRange reads a slice of a content stored whole or chunked, across its chunks, and nothing where one is missing", () =>
  withDbCas(async (cas) => {
    const wholeBytes = pseudoRandomBytes(300_000, 4);
    const chunkedBytes = pseudoRandomBytes(CHUNKING_THRESHOLD + 2_000_000, 5);
    const whole = await cas.putBytes(wholeBytes);
    const chunked = await cas.putBytes(chunkedBytes);
    const manifest = (await cas.manifest(chunked.hash))!;
    assert.ok(manifest.chunks.length >= 3, "several chunks");
    assertBytes(
      (await cas.readContentRange(whole.hash, 1_000, 2_000))!,
      wholeBytes.subarray(1_000, 3_000),
    );
    // From inside the first chunk to inside the third: every chunk between read in part or whole.
    const third = manifest.chunks[2]!;
    const from = manifest.chunks[0]!.size - 100;
    const to = third.offset + 100;
    assertBytes(
      (await cas.readContentRange(chunked.hash, from, to - from))!,
      chunkedBytes.subarray(from, to),
    );
    const end = chunkedBytes.length - 10;
    assertBytes((await cas.readContentRange(chunked.hash, end, 100))!, chunkedBytes.subarray(end));
    assert.equal(await cas.readContentRange("ab".repeat(32), 0, 10), null);
    await Deno.remove(join(cas.root, casObjectPath(third.hash)));
    assert.equal(
      await cas.readContentRange(chunked.hash, from, to - from),
      null,
      "a chunk missing",
    );
  }));
