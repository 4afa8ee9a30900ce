// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { BINARY_PERMISSIONS } from "../../lib/cli/sync_commands.ts";
import { Store } from "../../lib/store/mod.ts";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { runChronicle } from "../_helpers/processes.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";
import { call, ok, startChronicle, stdioTransport } from "./_mcp.ts";
import {
  badInputIsAToolError,
  deletedFileComesBack,
  largeOutputPages,
  listsToolsAndResources,
  pastViews,
  resourcesPage,
  restoreWorkspaceDryRunFirst,
  snapshotEditDiffRollback,
} from "./_scenarios.ts";

Deno.test("chronicle mcp over stdio: an agent's tools and resources on the running Chronicle", () =>
  withTempDir(async (root) => {
    const running = await startChronicle(root);
    const client = new Client({ name: "stdio-test", version: "1.0.0" });
    try {
      await client.connect(stdioTransport(root));
      assertEquals(client.getServerVersion()?.name, "chronicle");
      assert(client.getInstructions()?.includes("take_snapshot"));
      await listsToolsAndResources(client, root);
      await deletedFileComesBack(client, root);
      await snapshotEditDiffRollback(client, root);
      await restoreWorkspaceDryRunFirst(client, root);
      await pastViews(client, root);
      await resourcesPage(client, root);
      await badInputIsAToolError(client, root);
      await largeOutputPages(client);
    } finally {
      await client.close();
      await running.child.stop();
    }
  }));

Deno.test("chronicle mcp answers a tool error when Chronicle stops during the session", () =>
  withTempDir(async (root) => {
    const running = await startChronicle(root);
    const client = new Client({ name: "stdio-test", version: "1.0.0" });
    try {
      await client.connect(stdioTransport(root));
      assertEquals((await ok(client, "status")).json.running, true);
      await running.child.stop();
      const answer = await call(client, "status");
      assert(answer.isError, answer.text);
      assert(answer.text.includes(`No Chronicle is running on "${root}"`), answer.text);
    } finally {
      await client.close();
      await running.child.stop();
    }
  }));

Deno.test("chronicle mcp says on stderr that no Chronicle runs on the workspace", () =>
  withTempDir(async (root) => {
    await Deno.mkdir(`${root}/.chronicle`);
    Store.open(`${root}/.chronicle/chronicle.db`).close();
    const result = await runChronicle(["mcp", "-C", root], {
      permissions: [...BINARY_PERMISSIONS],
    });
    assertEquals(result.code, 1);
    assert(result.stderr.includes(`No Chronicle is running on "${root}"`), result.stderr);
    assertEquals(result.stdout, "");
  }));

Deno.test("chronicle mcp --help shows the client configuration", async () => {
  const result = await runChronicle(["mcp", "--help"]);
  assertEquals(result.code, 0);
  assert(result.stdout.includes('"mcpServers"'), result.stdout);
});
