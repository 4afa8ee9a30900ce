/**
 * Object-store benchmark, against a real S3-compatible server on loopback (`s3rver`):
 *
 * - upload of a tree by Chronicle's write-behind uploader, against `aws s3 sync` of the
 *   same tree to the same server in the same run;
 * - a checkpoint to the bucket, and rehydrating it on a clean folder, lazily (the latest
 *   tree) and eagerly (every object of the history).
 *
 * `CHRONICLE_BENCH_QUICK=1` (or `--quick`) runs 300 files instead of 10,000.
 *
 * Run: `deno run -A bench/objectstore_bench.ts`
 *
 * @module
 */
import { join } from "node:path";
import { checkpointToBucket, rehydrateFromBucket, Uploader } from "../lib/objectstore/mod.ts";
import { Workspace } from "../lib/workspace/mod.ts";
import { S3_ENV, S3Server } from "../tests/objectstore/_s3_server.ts";
import {
  discard,
  formatMiB,
  formatNumber,
  makeTree,
  peerUnavailable,
  quickMode,
  runPeer,
  timeMs,
} from "./_lib/mod.ts";

/**
 * Runs the benchmark.
 *
 * @param quick 300 files instead of 10,000.
 * @returns Printable result lines.
 */
export async function run(quick: boolean): Promise<string[]> {
  const files = quick ? 300 : 10_000;
  const base = await Deno.makeTempDir({ prefix: "chronicle-objectstore-bench-" });
  const server = await S3Server.start();
  try {
    const root = join(base, "tree");
    await Deno.mkdir(root);
    const tree = await makeTree(root, { files, seed: 21, maxSize: 65536 });
    const bytes = tree.reduce((sum, file) => sum + file.size, 0);
    const label = `${formatNumber(files)} files, ${formatMiB(bytes)}`;
    const client = server.client();

    const workspace = await Workspace.open({ root });
    let uploadMs: number;
    let checkpointMs: number;
    try {
      await workspace.scan();
      const uploader = new Uploader({
        db: workspace.store.db,
        cas: workspace.cas,
        client,
        prefix: "chronicle/",
      });
      uploadMs = await timeMs(() => uploader.syncOnce().then(() => {}));
      const { queuedObjects, failures } = uploader.status();
      if (queuedObjects > 0 || failures > 0) {
        throw new Error(`Upload left ${queuedObjects} queued, ${failures} failures`);
      }
      const { database, casDir } = workspace.layout;
      checkpointMs = await timeMs(async () => {
        await checkpointToBucket({ database, casDir, client, prefix: "chronicle/" });
      });
    } finally {
      await workspace.close();
    }

    const awsMs = await timeAws(root, server);
    const rate = (ms: number) =>
      `${formatNumber(ms)} ms (${formatNumber(files / (ms / 1000))} files/s, ${
        formatMiB(bytes / (ms / 1000))
      }/s)`;
    const versus = awsMs === null
      ? `aws s3 sync: ${peerUnavailable("aws")}`
      : `aws s3 sync of the same tree: ${rate(awsMs)} (Chronicle ${
        formatNumber(uploadMs / awsMs, 2)
      }x its time)`;

    const rehydrateMs = async (eager: boolean) => {
      const target = join(base, eager ? "eager" : "lazy");
      await Deno.mkdir(target);
      return await timeMs(async () => {
        await rehydrateFromBucket({
          client,
          prefix: "chronicle/",
          database: join(target, ".chronicle", "chronicle.db"),
          casDir: join(target, ".chronicle", "cas"),
          workspace: target,
          eager,
        });
      });
    };
    const lazy = await rehydrateMs(false);
    const eager = await rehydrateMs(true);
    return [
      `object store upload (${label}) to an S3 server on loopback: ${rate(uploadMs)}`,
      `  ${versus}`,
      `  checkpoint to the bucket (objects there already): ${formatNumber(checkpointMs)} ms`,
      `  rehydrate on a clean folder: lazy ${formatNumber(lazy)} ms, eager ${
        formatNumber(eager)
      } ms`,
    ];
  } finally {
    await server.close();
    await discard(base);
  }
}

/** `aws s3 sync` of the tree to the same server, in ms; `null` without the aws CLI. */
async function timeAws(root: string, server: S3Server): Promise<number | null> {
  const start = performance.now();
  const ran = await runPeer("aws", [
    "s3",
    "sync",
    "--quiet",
    "--exclude",
    ".chronicle/*",
    "--endpoint-url",
    server.endpoint,
    root,
    `s3://${server.bucket}/aws/`,
  ], { env: { ...S3_ENV, AWS_DEFAULT_REGION: "us-east-1" } });
  return ran ? performance.now() - start : null;
}

if (import.meta.main) {
  for (const line of await run(quickMode())) console.log(line);
}
