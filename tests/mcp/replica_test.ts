// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { put, putAtomic, readText, withTempDir } from "../_helpers/temp_dir.ts";
import { call, ok, startChronicle, stdioTransport, until } from "./_mcp.ts";

Deno.test("MCP on a master and its replica: status, wait_for_sync, a restore on the replica reaches the master, a wait with the master gone is an error", () =>
  withTempDir(async (base) => {
    const [master, replica] = [`${base}/agent`, `${base}/sandbox`];
    await Deno.mkdir(master);
    await Deno.mkdir(replica);
    await put(master, "spec.md", "from the agent\n");
    const socket = `${base}/m.sock`;
    const masterRun = await startChronicle(master, ["--replication", "--socket", socket]);
    const replicaRun = await startChronicle(replica, [
      "--connect",
      socket,
      "--sandbox-id",
      "sb-mcp",
    ]);
    const onMaster = new Client({ name: "master-test", version: "1.0.0" });
    const onReplica = new Client({ name: "replica-test", version: "1.0.0" });
    try {
      await onReplica.connect(stdioTransport(replica));
      await onMaster.connect(stdioTransport(master));
      const waited = await ok(onReplica, "wait_for_sync", { timeout_ms: 30_000 });
      assertEquals(waited.json.satisfied, true);
      const read = await ok(onReplica, "read_file", { path: "spec.md" });
      assert(read.text.endsWith("from the agent\n"), read.text);
      const replicaStatus = (await ok(onReplica, "status")).json;
      assertEquals(replicaStatus.role, "replica");
      const masterStatus = (await ok(onMaster, "status")).json;
      assertEquals(masterStatus.role, "master");
      const replicas = masterStatus.replication.replicas as Array<
        { sandboxId: string; lag: number }
      >;
      const seen = replicas.find((r) => r.sandboxId === "sb-mcp");
      assert(seen && typeof seen.lag === "number", JSON.stringify(masterStatus));
      assertEquals(typeof replicaStatus.replication.pendingWriteBacks, "number");
      assert(Array.isArray(replicaStatus.replication.conflicts), JSON.stringify(replicaStatus));

      // The agent host breaks the file; the sandbox's agent finds the good iteration in its
      // own history and restores it: the restore is a local change, written back to the master.
      // In one step: the empty file of a truncate, captured alone, would be an iteration
      // of its own on both sides (counted below, and the restore's number).
      await putAtomic(master, "spec.md", "broken\n");
      await ok(onReplica, "wait_for_sync", { timeout_ms: 30_000 });
      const history = (await until(
        "the broken edit replicated",
        onReplica,
        "file_history",
        { path: "spec.md" },
        (a) => !a.isError && a.json.total === 2,
      )).json.iterations as Array<{ iteration: number; size: number }>;
      const good = history.find((i) => i.size === "from the agent\n".length)!;
      const restored = await ok(onReplica, "restore_file", {
        path: "spec.md",
        iteration: good.iteration,
      });
      assertEquals(restored.json.restored, "spec.md");
      assertEquals(await readText(`${replica}/spec.md`), "from the agent\n");
      const onHost = await until(
        "the restore written back to the master",
        onMaster,
        "read_file",
        { path: "spec.md" },
        (a) => !a.isError && a.text.endsWith("from the agent\n"),
      );
      assert(onHost.text.includes("iteration 3"), onHost.text);
      assertEquals(await readText(`${master}/spec.md`), "from the agent\n");

      // With its master gone, a wait that cannot be satisfied is an error the model sees.
      await onMaster.close();
      await masterRun.child.stop();
      const stranded = await call(onReplica, "wait_for_sync", { timeout_ms: 500 });
      assert(stranded.isError, stranded.text);
      assertEquals(stranded.json.satisfied, false);
    } finally {
      await onMaster.close();
      await onReplica.close();
      await replicaRun.child.stop();
      await masterRun.child.stop();
    }
  }));
