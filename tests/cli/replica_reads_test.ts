/**
 * A sandbox replica keeps no copy of the master's content: `chronicle cat` and `diff` run
 * beside it read the master's versions through the running replica (`GET /content/{hash}`
 * on its control socket), which reads them through its master; the latest, once the master
 * is gone, from the replica's own file. Its checkpoint refuses, saying why.
 */
import { match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { casManifestPath, casObjectPath, sha256Hex } from "../../lib/cas/mod.ts";
import { pseudoRandomBytes } from "../_helpers/random_bytes.ts";
import { controlFetch, controlJson } from "../_helpers/control_socket.ts";
import { type Child, runChronicle, spawnChronicle } from "../_helpers/processes.ts";
import { putAtomic, withTempDir } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";

Deno.test("cat and diff on a sandbox replica read the master's versions through it, and say where they are once the master is gone; its checkpoint says to checkpoint the master", async () => {
  await withTempDir(async (dir) => {
    const masterRoot = join(dir, "master");
    const replicaRoot = join(dir, "replica");
    await Deno.mkdir(masterRoot);
    await Deno.mkdir(replicaRoot);
    const first = "the first version, long enough to be fetched\n".repeat(200);
    await Deno.writeTextFile(join(masterRoot, "notes.md"), first);
    // Large (chunked): the replica keeps it only as chunks, never also whole.
    const bigFirst = pseudoRandomBytes(5 * 1024 * 1024, 3);
    await Deno.writeFile(join(masterRoot, "big.bin"), bigFirst);
    const master = spawnChronicle([masterRoot, "--replication"]);
    const socket = join(masterRoot, ".chronicle", "chronicle.sock");
    let replica: Child | undefined;
    let masterStopped = false;
    const replicaData = join(replicaRoot, ".chronicle");
    try {
      await waitFor(
        "master ready",
        async () => (await controlJson(join(masterRoot, ".chronicle"), "/ready")).status === 200,
      );
      replica = spawnChronicle([replicaRoot, "--connect", socket]);
      await waitFor(
        "the replica live",
        async () => (await controlJson(replicaData, "/ready")).status === 200,
      );
      await putAtomic(masterRoot, "notes.md", "the second version\n");
      await putAtomic(masterRoot, "big.bin", "no longer large\n");
      await waitFor("the second versions on the replica", async () => {
        const runs = await Promise.all(
          ["notes.md", "big.bin"].map((path) =>
            runChronicle(["history", path, "--json"], { cwd: replicaRoot })
          ),
        );
        return runs.every((run) =>
          run.code === 0 && (JSON.parse(run.stdout) as unknown[]).length === 2
        );
      });
      const big = await runChronicle(["cat", "big.bin", "--at", "1"], { cwd: replicaRoot });
      strictEqual(big.code, 0, big.stderr);
      // The running replica read it through its master and keeps its chunks; the command
      // that asked it does not keep it again, whole.
      const bigHash = sha256Hex(bigFirst);
      const exists = (path: string) => Deno.stat(path).then(() => true, () => false);
      strictEqual(await exists(join(replicaData, "cas", casManifestPath(bigHash))), true);
      strictEqual(await exists(join(replicaData, "cas", casObjectPath(bigHash))), false);

      const cat = await runChronicle(["cat", "notes.md", "--at", "1"], { cwd: replicaRoot });
      strictEqual(cat.code, 0, cat.stderr);
      strictEqual(cat.stdout, first);
      const diff = await runChronicle(["diff", "notes.md", "--from", "1", "--to", "2"], {
        cwd: replicaRoot,
      });
      strictEqual(diff.code, 0, diff.stderr);
      ok(diff.stdout.includes("+the second version"), diff.stdout);

      // The route itself: a malformed hash is refused, an unknown one not found.
      const bad = await controlFetch(replicaData, "/content/nothex");
      strictEqual(bad.status, 400);
      const unknown = await controlFetch(replicaData, `/content/${"ab".repeat(32)}`);
      strictEqual(unknown.status, 404);
      const served = await controlFetch(
        replicaData,
        `/content/${sha256Hex(new TextEncoder().encode(first))}`,
      );
      strictEqual(served.status, 200);
      strictEqual(await served.text(), first);

      await putAtomic(masterRoot, "notes.md", "the third version\n");
      await waitFor("the third version on the replica", async () => {
        const run = await runChronicle(["history", "notes.md", "--json"], { cwd: replicaRoot });
        return run.code === 0 && (JSON.parse(run.stdout) as unknown[]).length === 3;
      });
      // A checkpoint of the replica would lose the third version, which it does not hold:
      // refused, saying why.
      const backup = await runChronicle(["checkpoint"], { cwd: replicaRoot });
      strictEqual(backup.code, 1, backup.stdout);
      match(backup.stderr, /a master's version, which a sandbox replica keeps no copy of/);
      match(backup.stderr, /checkpoint the master/);
      await putAtomic(masterRoot, "notes.md", "the fourth version\n");
      await waitFor("the fourth version on the replica", async () => {
        const run = await runChronicle(["history", "notes.md", "--json"], { cwd: replicaRoot });
        return run.code === 0 && (JSON.parse(run.stdout) as unknown[]).length === 4;
      });
      await master.stop();
      masterStopped = true;
      await waitFor(
        "the replica to notice",
        async () =>
          ((await controlJson(replicaData, "/sync/status")).body as { connected?: boolean })
            .connected === false,
      );
      // The third version was written from its notification and never read since.
      const stranded = await runChronicle(["cat", "notes.md", "--at", "3"], { cwd: replicaRoot });
      strictEqual(stranded.code, 1, stranded.stdout);
      match(stranded.stderr, /held by the master, and this replica is not connected to it/);
      // The fourth, the latest, is the file on the replica's disk: read from there.
      const latest = await runChronicle(["cat", "notes.md"], { cwd: replicaRoot });
      strictEqual(latest.code, 0, latest.stderr);
      strictEqual(latest.stdout, "the fourth version\n");
      // What was read through it before is kept.
      const kept = await runChronicle(["cat", "notes.md", "--at", "1"], { cwd: replicaRoot });
      strictEqual(kept.stdout, first);
    } finally {
      await replica?.stop();
      if (!masterStopped) await master.stop();
    }
  }, "chronicle-replica-reads-");
});
