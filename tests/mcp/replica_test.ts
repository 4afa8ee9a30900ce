// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { put, withTempDir } from "../_helpers/temp_dir.ts";
import { ok, startChronicle, stdioTransport } from "./_mcp.ts";

Deno.test("MCP on a master and its replica: status shows the replica, wait_for_sync on the replica", () =>
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
      const replicas = masterStatus.replication.replicas as Array<{ sandboxId: string }>;
      assert(replicas.some((r) => r.sandboxId === "sb-mcp"), JSON.stringify(masterStatus));
    } finally {
      await onMaster.close();
      await onReplica.close();
      await replicaRun.child.stop();
      await masterRun.child.stop();
    }
  }));
