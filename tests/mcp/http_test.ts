// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";
import { startChronicle } from "./_mcp.ts";
import {
  badInputIsAToolError,
  deletedFileComesBack,
  listsToolsAndResources,
  snapshotEditDiffRollback,
} from "./_scenarios.ts";

const TOKEN = "mcp-test-token";

function httpClient(port: number, token: string | undefined) {
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
    requestInit: token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } },
  });
  return { client: new Client({ name: "http-test", version: "1.0.0" }), transport };
}

Deno.test("POST /mcp on --http: the same tools, behind the token", () =>
  withTempDir(async (root) => {
    const running = await startChronicle(root, ["--http", "127.0.0.1:0", "--token", TOKEN]);
    assert(running.port > 0, running.child.output());
    const { client, transport } = httpClient(running.port, TOKEN);
    try {
      await client.connect(transport);
      await listsToolsAndResources(client, root);
      await deletedFileComesBack(client, root);
      await snapshotEditDiffRollback(client, root);
      await badInputIsAToolError(client, root);
    } finally {
      await client.close();
      await running.child.stop();
    }
  }));

Deno.test("POST /mcp on --http refuses a missing or wrong token, even to list tools; a large or non-JSON body and a GET are refused clearly", () =>
  withTempDir(async (root) => {
    const running = await startChronicle(root, ["--http", "127.0.0.1:0", "--token", TOKEN]);
    const url = `http://127.0.0.1:${running.port}/mcp`;
    const list = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    const headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    };
    try {
      for (const authorization of [undefined, "Bearer wrong-token", TOKEN]) {
        const response = await fetch(url, {
          method: "POST",
          body: list,
          headers: authorization === undefined ? headers : { ...headers, authorization },
        });
        await response.body?.cancel();
        assertEquals(response.status, 401, `authorization ${authorization}`);
      }
      const answered = await fetch(url, {
        method: "POST",
        body: list,
        headers: { ...headers, authorization: `Bearer ${TOKEN}` },
      });
      assertEquals(answered.status, 200);
      assert(((await answered.json()).result.tools as unknown[]).length > 10);
      const huge = await fetch(url, {
        method: "POST",
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 2,
          method: "ping",
          params: { pad: "x".repeat(2 << 20) },
        }),
        headers: { ...headers, authorization: `Bearer ${TOKEN}` },
      });
      assertEquals(huge.status, 413);
      assert((await huge.json()).error.message.includes("exceeds"));
      const notJson = await fetch(url, {
        method: "POST",
        body: "{not json",
        headers: { ...headers, authorization: `Bearer ${TOKEN}` },
      });
      assertEquals(notJson.status, 400);
      assertEquals((await notJson.json()).error.code, -32700);
      const stream = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
      assertEquals(stream.status, 405);
      assertEquals(stream.headers.get("allow"), "POST");
      assert((await stream.json()).error.message.includes("stateless"));
      for (const token of [undefined, "wrong-token"]) {
        const { client, transport } = httpClient(running.port, token);
        await client.connect(transport).then(
          () => assert(false, "connected without the token"),
          (error: Error) => assert(/401|Unauthorized|token/i.test(error.message), error.message),
        );
        await client.close();
      }
    } finally {
      await running.child.stop();
    }
  }));

Deno.test("POST /mcp on --http without a configured token is refused, saying to start with --token", () =>
  withTempDir(async (root) => {
    const running = await startChronicle(root, ["--http", "127.0.0.1:0"]);
    const { client, transport } = httpClient(running.port, undefined);
    try {
      await client.connect(transport).then(
        () => assert(false, "MCP served over HTTP with no token configured"),
        (error: Error) => assert(error.message.includes("--token"), error.message),
      );
    } finally {
      await client.close();
      await running.child.stop();
    }
  }));
