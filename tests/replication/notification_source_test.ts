/**
 * NotificationSource reads each notification's inline content from a real CAS (rows in
 * a real SQLite database, and files): the stored bytes decide what is inlined.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Cas, sha256Hex } from "../../lib/cas/mod.ts";
import { PathFilter } from "../../lib/filter/mod.ts";
import { INLINE_LIMIT, NotificationSource } from "../../lib/replication/notification_source.ts";
import { type Iteration, Store } from "../../lib/store/mod.ts";
import { decodeMessage, type NotificationMessage } from "../../lib/wire/mod.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

function bytesOf(size: number, seed: number): Uint8Array {
  return Uint8Array.from({ length: size }, (_, i) => (i * 31 + seed) & 0xff);
}

/** A live file's first iteration, recorded locally at sequence 7. */
function iterationOf(path: string, hash: string, size: number): Iteration {
  return {
    path,
    hash,
    size,
    mode: 0o100644,
    deleted: false,
    iteration: 1,
    sequence: 7,
    timestamp: 0,
    origin: "local",
  };
}

Deno.test("NotificationSource inlines exactly the stored bytes of content under the limit", async (t) => {
  await withTempDir(async (dir) => {
    const store = Store.open(join(dir, "db"));
    try {
      const cas = await Cas.open(join(dir, "cas"), { db: store.db });
      const source = new NotificationSource(cas, new PathFilter(["*.log"]));
      const frame = async (path: string, hash: string, size: number) => {
        const encoded = await source.frame(iterationOf(path, hash, size));
        return encoded && (decodeMessage(encoded.subarray(4)) as NotificationMessage);
      };
      const cases = [
        { description: "empty", size: 0, recorded: 0, inlined: true },
        { description: "small", size: 100, recorded: 100, inlined: true },
        { description: "one under the limit", size: INLINE_LIMIT - 1, recorded: 10, inlined: true },
        { description: "at the limit", size: INLINE_LIMIT, recorded: 10, inlined: false },
        { description: "a file object", size: 70_000, recorded: 10, inlined: false },
      ];
      for (const [i, { description, size, recorded, inlined }] of cases.entries()) {
        await t.step(description, async () => {
          const bytes = bytesOf(size, i);
          const { hash } = await cas.putBytes(bytes);
          // The recorded size may be stale (a capture racing its writer): the bytes decide.
          const message = (await frame(`f${i}.txt`, hash, recorded))!;
          assert.equal(message.content_hash, hash);
          if (inlined) assert.deepEqual(message.inline_content, bytes);
          else assert.equal(message.inline_content, null);
        });
      }
      await t.step("content not stored: sent without inline content", async () => {
        const message = (await frame("gone.txt", sha256Hex(bytesOf(5, 99)), 5))!;
        assert.equal(message.inline_content, null);
      });
      await t.step("a filtered path gives no frame", async () => {
        assert.equal(await frame("x.log", sha256Hex(bytesOf(5, 1)), 5), null);
      });
    } finally {
      store.close();
    }
  });
});

Deno.test("NotificationSource.prefetch() reads a page's small contents ahead; each frame is built as without it", async (t) => {
  await withTempDir(async (dir) => {
    const store = Store.open(join(dir, "db"));
    try {
      const cas = await Cas.open(join(dir, "cas"), { db: store.db });
      const source = new NotificationSource(cas, new PathFilter(["*.log"]));
      const inlineOf = async (iteration: Iteration) => {
        const encoded = await source.frame(iteration);
        return encoded &&
          (decodeMessage(encoded.subarray(4)) as NotificationMessage).inline_content;
      };
      const small = bytesOf(100, 1);
      const atLimit = bytesOf(INLINE_LIMIT, 2);
      const filtered = bytesOf(50, 3);
      const page = [
        iterationOf("small.txt", (await cas.putBytes(small)).hash, small.length),
        iterationOf("limit.txt", (await cas.putBytes(atLimit)).hash, 10),
        iterationOf("x.log", (await cas.putBytes(filtered)).hash, filtered.length),
      ];
      source.prefetch(page);
      // Rows gone from the table after the prefetch show which frames were read ahead.
      store.db.exec("DELETE FROM cas_objects");
      await t.step("a small content read ahead is inlined as stored", async () => {
        assert.deepEqual(await inlineOf(page[0]!), small);
      });
      await t.step("each read-ahead content serves its iteration once", async () => {
        assert.equal(await inlineOf(page[0]!), null);
      });
      await t.step("the same content in another page's iteration is read on its own", async () => {
        assert.equal(await inlineOf(iterationOf("again.txt", page[0]!.hash, small.length)), null);
      });
      await t.step("content at the limit is not inlined, read ahead or not", async () => {
        assert.equal(await inlineOf(page[1]!), null);
      });
      await t.step("a filtered path gives no frame", async () => {
        assert.equal(await source.frame(page[2]!), null);
      });
    } finally {
      store.close();
    }
  });
});
