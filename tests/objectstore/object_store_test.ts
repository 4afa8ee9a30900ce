import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { Cas, casObjectPath, CorruptContentError, sha256Hex } from "../../lib/cas/mod.ts";
import {
  checkpointToBucket,
  listBucketCheckpoints,
  manifestKey,
  objectKey,
  ObjectTier,
  rehydrateFromBucket,
  Uploader,
} from "../../lib/objectstore/mod.ts";
import { Store } from "../../lib/store/mod.ts";
import { Workspace } from "../../lib/workspace/mod.ts";
import { pseudoRandomBytes } from "../_helpers/random_bytes.ts";
import { treeState } from "../_helpers/tree_state.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import { S3Server } from "./_s3_server.ts";

const PREFIX = "fleet/";
const text = (s: string) => new TextEncoder().encode(s);

/** A workspace with a little history: two versions of a file, a folder, a link, a large file. */
async function makeWorkspace(root: string, extra: Record<string, string> = {}): Promise<Workspace> {
  await Deno.mkdir(join(root, "docs"), { recursive: true });
  await Deno.writeTextFile(join(root, "notes.md"), "v1\n");
  await Deno.writeFile(join(root, "data.bin"), pseudoRandomBytes(100_000, 1));
  const workspace = await Workspace.open({ root });
  await workspace.scan();
  await Deno.writeTextFile(join(root, "notes.md"), "v2\n");
  await Deno.writeFile(join(root, "data.bin"), pseudoRandomBytes(100_000, 2));
  await Deno.writeTextFile(join(root, "docs", "shared.txt"), "the same in every instance\n");
  await Deno.writeFile(join(root, "big.bin"), pseudoRandomBytes(5 * 1024 * 1024, 5));
  await Deno.symlink("docs/shared.txt", join(root, "link"));
  for (const [path, content] of Object.entries(extra)) {
    await Deno.writeTextFile(join(root, path), content);
  }
  await workspace.scan();
  return workspace;
}

async function withServer(work: (server: S3Server, base: string) => Promise<void>): Promise<void> {
  const server = await S3Server.start();
  const base = await Deno.makeTempDir({ prefix: "chronicle-objectstore-" });
  try {
    await work(server, base);
  } finally {
    await server.close();
    await Deno.remove(base, { recursive: true });
  }
}

Deno.test("Uploader sends what the store references, and a second instance sends nothing twice", async () => {
  await withServer(async (server, base) => {
    const client = server.client();
    const first = await makeWorkspace(join(base, "a"), { "only-a.txt": "a\n" });
    try {
      const uploader = new Uploader({ db: first.store.db, cas: first.cas, client, prefix: PREFIX });
      await uploader.syncOnce();
      const status = uploader.status();
      strictEqual(status.queuedObjects, 0);
      strictEqual(status.failures, 0);
      ok(status.uploadedBytes > 5 * 1024 * 1024, `sent ${status.uploadedBytes} bytes`);
      // Every referenced content is there, under its hash; the large one as chunks + manifest.
      const shared = sha256Hex(text("the same in every instance\n"));
      deepStrictEqual(
        await client.getObject(objectKey(PREFIX, shared)),
        text("the same in every instance\n"),
      );
      const big = sha256Hex(pseudoRandomBytes(5 * 1024 * 1024, 5));
      ok(await client.headObject(manifestKey(PREFIX, big)), "the large file's manifest");
      strictEqual(await client.headObject(objectKey(PREFIX, big)), null, "not stored whole");
      // Nothing left to send: a second pass sends nothing.
      await uploader.syncOnce();
      strictEqual(uploader.status().uploadedBytes, status.uploadedBytes);
    } finally {
      await first.close();
    }

    const second = await makeWorkspace(join(base, "b"), { "only-b.txt": "b\n" });
    try {
      const uploader = new Uploader({
        db: second.store.db,
        cas: second.cas,
        client,
        prefix: PREFIX,
      });
      await uploader.syncOnce();
      const status = uploader.status();
      strictEqual(status.queuedObjects, 0);
      // Only what instance a did not have travels: "only-b.txt" (2 bytes).
      strictEqual(status.uploadedBytes, 2);
      ok(status.alreadyThere >= 5, `found ${status.alreadyThere} objects there already`);
    } finally {
      await second.close();
    }
  });
});

Deno.test("Uploader's background loop sends noticed content at once without sweeping the history for it", async () => {
  await withServer(async (server, base) => {
    const client = server.client();
    const workspace = await makeWorkspace(join(base, "a"), { "only-a.txt": "a\n" });
    const uploader = new Uploader({
      db: workspace.store.db,
      cas: workspace.cas,
      client,
      prefix: PREFIX,
      sweepIntervalMs: 3_600_000,
    });
    try {
      uploader.start();
      // The first pass sweeps: what the history held at start is sent.
      await waitFor("the first pass", () => uploader.isUploaded(sha256Hex(text("a\n"))));
      const unnoticed = await workspace.writeBytes("unnoticed.txt", text("recorded, not noticed"));
      const noticed = await workspace.writeBytes("noticed.txt", text("recorded and noticed"));
      uploader.notice([noticed!]);
      await waitFor("the noticed content", () => uploader.isUploaded(noticed!.hash));
      // The pass woken for it did not read the whole history again: the other waits for
      // the next sweep (an hour away here).
      strictEqual(uploader.isUploaded(unnoticed!.hash), false);
      await uploader.stop();
      const next = new Uploader({
        db: workspace.store.db,
        cas: workspace.cas,
        client,
        prefix: PREFIX,
      });
      await next.syncOnce();
      strictEqual(next.isUploaded(unnoticed!.hash), true, "a pass of its own sweeps");
    } finally {
      await uploader.stop();
      await workspace.close();
    }
  });
});

Deno.test("ObjectTier reads missing content through, verified; a corrupt object is reported, never served", async () => {
  await withServer(async (server, base) => {
    const client = server.client();
    const workspace = await makeWorkspace(join(base, "a"), { "victim.txt": "the real bytes\n" });
    await new Uploader({ db: workspace.store.db, cas: workspace.cas, client, prefix: PREFIX })
      .syncOnce();
    await workspace.close();

    const tier = new ObjectTier(client, PREFIX);
    const cas = await Cas.open(join(base, "fresh-cas"), { tier });
    const bigBytes = pseudoRandomBytes(5 * 1024 * 1024, 5);
    deepStrictEqual(await cas.readBytes(sha256Hex(text("v1\n"))), text("v1\n"));
    deepStrictEqual(await cas.readBytes(sha256Hex(bigBytes)), bigBytes);
    ok(await cas.has(sha256Hex(bigBytes)), "stored locally once fetched");
    const fetched = tier.stats().fetchedObjects;
    await cas.readBytes(sha256Hex(bigBytes));
    strictEqual(tier.stats().fetchedObjects, fetched, "fetched once");

    const victim = sha256Hex(text("the real bytes\n"));
    await client.putObject(objectKey(PREFIX, victim), text("tampered bytes\n"));
    await rejects(cas.readBytes(victim), CorruptContentError);
    strictEqual(tier.stats().corruptObjects, 1);
    strictEqual(tier.stats().lastCorrupt, victim);
    strictEqual(await cas.has(victim), false, "the corrupt copy is not kept");
  });
});

Deno.test("checkpointToBucket() then rehydrateFromBucket() on a clean host: same tree, same history", async (t) => {
  await withServer(async (server, base) => {
    const client = server.client();
    const root = join(base, "host-1");
    const workspace = await makeWorkspace(root);
    const expectedTree = await treeState(root);
    const expectedHistory = workspace.store.history("notes.md").map((i) => [i.iteration, i.hash]);
    const { database, casDir } = workspace.layout;
    const taken = await checkpointToBucket({ database, casDir, client, prefix: PREFIX, keep: 2 });
    await workspace.close();
    await Deno.remove(root, { recursive: true }); // the host is gone
    ok(taken.uploadedBytes > 0);
    deepStrictEqual(await listBucketCheckpoints(client, PREFIX), [taken.id]);

    for (const eager of [false, true]) {
      await t.step(eager ? "eager" : "lazy", async () => {
        const target = join(base, eager ? "host-eager" : "host-lazy");
        await Deno.mkdir(target);
        const data = join(target, ".chronicle");
        const result = await rehydrateFromBucket({
          client,
          prefix: PREFIX,
          database: join(data, "chronicle.db"),
          casDir: join(data, "cas"),
          workspace: target,
          eager,
        });
        deepStrictEqual(result.problems, []);
        deepStrictEqual(await treeState(target), expectedTree);
        const store = Store.open(join(data, "chronicle.db"));
        try {
          const history = store.history("notes.md");
          deepStrictEqual(history.map((i) => [i.iteration, i.hash]), expectedHistory);
          // Small contents travel in the database copy; a larger one of the history stays
          // in the bucket until read, unless the rehydrate was eager.
          const old = store.history("data.bin")[0]!.hash;
          const local = await Cas.open(join(data, "cas"), { db: store.db });
          strictEqual(await local.has(old), eager);
          const through = await Cas.open(join(data, "cas"), {
            db: store.db,
            tier: new ObjectTier(client, PREFIX),
          });
          deepStrictEqual(await through.readBytes(old), pseudoRandomBytes(100_000, 1));
          deepStrictEqual(await through.readBytes(history[0]!.hash), text("v1\n"));
        } finally {
          store.close();
        }
      });
    }
  });
});

Deno.test("checkpointToBucket() keeps the newest checkpoints and only complete ones count", async () => {
  await withServer(async (server, base) => {
    const client = server.client();
    const workspace = await makeWorkspace(join(base, "a"));
    try {
      const { database, casDir } = workspace.layout;
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        await Deno.writeTextFile(join(workspace.root, "notes.md"), `v${i + 3}\n`);
        await workspace.scan();
        ids.push(
          (await checkpointToBucket({ database, casDir, client, prefix: PREFIX, keep: 2 })).id,
        );
      }
      deepStrictEqual(await listBucketCheckpoints(client, PREFIX), ids.slice(1));
      // A checkpoint whose checkpoint.json never arrived is not one.
      await client.putObject(`${PREFIX}checkpoints/9999-partial/chronicle.db`, text("half"));
      deepStrictEqual(await listBucketCheckpoints(client, PREFIX), ids.slice(1));
    } finally {
      await workspace.close();
    }
  });
});

Deno.test("Cas.evict() keeps local copies within the limit, least recently used first, only what the bucket holds", async () => {
  await withServer(async (server, base) => {
    const client = server.client();
    const root = join(base, "a");
    await Deno.mkdir(root);
    const contents = Array.from({ length: 8 }, (_, i) => pseudoRandomBytes(100_000, 100 + i));
    for (const [i, bytes] of contents.entries()) {
      await Deno.writeFile(join(root, `f${i}.bin`), bytes);
    }
    const workspace = await Workspace.open({ root });
    try {
      await workspace.scan();
      const uploader = new Uploader({
        db: workspace.store.db,
        cas: workspace.cas,
        client,
        prefix: PREFIX,
      });
      const isUploaded = (hash: string) => uploader.isUploaded(hash);
      // Nothing is in the bucket yet: nothing may go, whatever the limit.
      deepStrictEqual(await workspace.cas.evict(0, isUploaded), {
        removedObjects: 0,
        removedBytes: 0,
      });
      await uploader.syncOnce();
      // The first two were read recently (their last use moved forward); the rest are old.
      const old = new Date(Date.now() - 7_200_000);
      for (const bytes of contents) {
        const path = join(workspace.layout.casDir, casObjectPath(sha256Hex(bytes)));
        await Deno.utime(path, old, old);
      }
      await workspace.cas.readBytes(sha256Hex(contents[0]!));
      await workspace.cas.readBytes(sha256Hex(contents[1]!));
      const removed = await workspace.cas.evict(250_000, isUploaded);
      strictEqual(removed.removedObjects, 6);
      strictEqual(await workspace.cas.has(sha256Hex(contents[0]!)), true, "recently read: kept");
      strictEqual(await workspace.cas.has(sha256Hex(contents[1]!)), true, "recently read: kept");
      strictEqual(await workspace.cas.has(sha256Hex(contents[2]!)), false, "evicted");
      // An evicted object is read through the bucket again.
      workspace.cas.setTier(new ObjectTier(client, PREFIX));
      deepStrictEqual(await workspace.cas.readBytes(sha256Hex(contents[5]!)), contents[5]);
    } finally {
      await workspace.close();
    }
  });
});
