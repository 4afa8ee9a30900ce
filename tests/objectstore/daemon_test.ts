import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { referencedHashes } from "../../lib/checkpoint/mod.ts";
import { BINARY_PERMISSIONS } from "../../lib/cli/sync_commands.ts";
import { openDatabase } from "../../lib/db/mod.ts";
import { listBucketCheckpoints, objectKey } from "../../lib/objectstore/mod.ts";
import { controlJson } from "../_helpers/control_socket.ts";
import { type Child, spawnChronicle } from "../_helpers/processes.ts";
import { putAtomic } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import { S3_ENV, S3Server } from "./_s3_server.ts";

interface Uploads {
  queuedObjects: number;
  uploadedObjects: number;
  failures: number;
  degraded: boolean;
}

function start(root: string, server: S3Server): Child {
  return spawnChronicle(
    [root, "--object-store", `s3://${server.bucket}/ws/`, "--s3-endpoint", server.endpoint],
    { env: S3_ENV, permissions: [...BINARY_PERMISSIONS] },
  );
}

async function uploads(data: string): Promise<Uploads | null> {
  const { body } = await controlJson(data, "/status");
  return (body as { object_store?: { uploads: Uploads } })?.object_store?.uploads ?? null;
}

/** Every content the database references is in the bucket (small ones whole, large as chunks). */
async function assertAllInBucket(server: S3Server, database: string): Promise<number> {
  const db = openDatabase(database, { readOnly: true });
  let hashes: string[];
  try {
    hashes = referencedHashes(db);
  } finally {
    db.close();
  }
  const keys = new Set(await Array.fromAsync(server.client().listKeys("ws/")));
  const missing = hashes.filter((hash) => !keys.has(objectKey("ws/", hash)));
  deepStrictEqual(missing, []);
  return hashes.length;
}

Deno.test("chronicle --object-store: an unreachable bucket only delays uploads, and kill -9 loses none", async () => {
  const server = await S3Server.start();
  const root = await Deno.makeTempDir({ prefix: "chronicle-objectstore-daemon-" });
  const data = join(root, ".chronicle");
  let child = start(root, server);
  try {
    await waitFor(
      "Chronicle to be ready",
      async () => (await controlJson(data, "/ready")).status === 200,
      {
        timeoutMs: 60_000,
      },
    );

    // 1. The bucket goes away under load: local work goes on, /ready says what is degraded.
    await server.stop();
    for (let i = 0; i < 40; i++) await Deno.writeTextFile(join(root, `a-${i}.txt`), `first ${i}\n`);
    await waitFor("the uploads to fail", async () => (await uploads(data))?.degraded === true, {
      timeoutMs: 60_000,
    });
    const ready = await controlJson(data, "/ready");
    strictEqual(ready.status, 200, "local work goes on");
    ok(
      (ready.body as { degraded: string[] }).degraded.some((d) =>
        d.startsWith("object store uploads")
      ),
      JSON.stringify(ready.body),
    );
    // It comes back: the queue drains by itself.
    await server.restart();
    await waitFor("the queue to drain", async () => {
      const state = await uploads(data);
      return state !== null && state.queuedObjects === 0 && !state.degraded;
    }, { timeoutMs: 120_000 });

    // 2. The bucket goes away again, and Chronicle is killed with uploads pending.
    await server.stop();
    for (let i = 0; i < 40; i++) {
      await Deno.writeTextFile(join(root, `b-${i}.txt`), `second ${i}\n`);
    }
    await waitFor(
      "the new files to be queued",
      async () => (await uploads(data))!.queuedObjects >= 40,
      {
        timeoutMs: 60_000,
      },
    );
    await child.stop("SIGKILL");
    await server.restart();
    child = start(root, server);
    await waitFor("the queue to drain after the restart", async () => {
      const state = await uploads(data).catch(() => null);
      return state !== null && state.queuedObjects === 0 && state.uploadedObjects >= 40;
    }, { timeoutMs: 120_000 });
    const count = await assertAllInBucket(server, join(data, "chronicle.db"));
    ok(count >= 80, `${count} contents in the bucket`);
  } finally {
    await child.stop();
    await server.close();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("chronicle --checkpoint-interval checkpoints to the bucket on a timer and once more at SIGTERM", async () => {
  const server = await S3Server.start();
  const root = await Deno.makeTempDir({ prefix: "chronicle-objectstore-interval-" });
  const data = join(root, ".chronicle");
  const client = server.client();
  const child = spawnChronicle(
    [
      root,
      "--object-store",
      `s3://${server.bucket}/ws/`,
      "--s3-endpoint",
      server.endpoint,
      "--checkpoint-interval",
      "1s",
      "--checkpoint-keep",
      "3",
    ],
    { env: S3_ENV, permissions: [...BINARY_PERMISSIONS] },
  );
  try {
    // Each write in one step: the empty file of a truncate, captured alone, would reach
    // the sequence waited for below before the last write is recorded.
    await putAtomic(root, "notes.md", "before\n");
    await waitFor(
      "a periodic checkpoint",
      async () => (await listBucketCheckpoints(client, "ws/")).length >= 2,
      { timeoutMs: 60_000 },
    );
    await putAtomic(root, "notes.md", "last words\n");
    const sequence = await waitFor("the last write to be recorded", async () => {
      const { body } = await controlJson(data, "/status");
      const status = body as { sequence: number };
      return status.sequence >= 2 ? status.sequence : 0;
    });
    strictEqual(await child.stop("SIGTERM"), 0);
    const ids = await listBucketCheckpoints(client, "ws/");
    ok(ids.length <= 3, `retention keeps 3, found ${ids.length}`);
    const info = JSON.parse(
      new TextDecoder().decode(
        (await client.getObject(`ws/checkpoints/${ids.at(-1)}/checkpoint.json`))!,
      ),
    ) as { sequence: number };
    strictEqual(info.sequence, sequence, "the SIGTERM checkpoint holds the last write");
  } finally {
    await child.stop();
    await server.close();
    await Deno.remove(root, { recursive: true });
  }
});
