import { Hono } from "hono";
import type { Routes } from "../net/mod.ts";
import { log } from "../log/mod.ts";
import type { McpContext, McpIdentity } from "./context.ts";

/**
 * The MCP SDK and our server on it, loaded at the first request: they are about 15 MB of
 * heap (and more of RSS) that a Chronicle nobody asks over MCP never needs (issue #17).
 * Static specifiers, so `deno compile` bundles them.
 */
async function loadMcp() {
  const [sdk, server] = await Promise.all([
    import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"),
    import("./server.ts"),
  ]);
  return {
    Transport: sdk.WebStandardStreamableHTTPServerTransport,
    createMcpServer: server.createMcpServer,
  };
}

/** Largest JSON-RPC request body `POST /mcp` reads. */
export const MAX_MCP_BODY_BYTES = 1024 * 1024;

/**
 * `POST /mcp`: the MCP Streamable HTTP endpoint, stateless (no session: each request gets
 * a fresh server over the same running Chronicle, answered as JSON). `GET` and `DELETE`
 * (server-sent streams and sessions) answer 405. Mounted on the control socket (for
 * `chronicle mcp`) and on `--http`, where the app requires the token for every POST.
 *
 * @param context The running Chronicle.
 * @param identity Name and version to announce.
 * @returns The routes, to mount at `/`.
 */
export function mcpRoutes(context: McpContext, identity: McpIdentity): Routes {
  const app = new Hono();
  app.post("/mcp", async (c) => {
    const body = await boundedText(c.req.raw);
    if (body === undefined) {
      return rpcError(413, -32600, `Request body exceeds ${MAX_MCP_BODY_BYTES} bytes`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return rpcError(400, -32700, "Parse error: the body is not JSON");
    }
    const { Transport, createMcpServer } = await loadMcp();
    const server = createMcpServer(context, identity);
    const transport = new Transport({
      // No sessionIdGenerator: stateless.
      enableJsonResponse: true,
    });
    try {
      await server.connect(transport);
      return await transport.handleRequest(c.req.raw, { parsedBody: parsed });
    } finally {
      // With JSON responses the answer is complete here; the server has nothing left to say.
      await server.close().catch((error) => log("warn", "mcp close failed", { error }));
    }
  });
  app.on(
    ["GET", "DELETE"],
    "/mcp",
    () =>
      rpcError(405, -32000, "Method not allowed: this MCP endpoint is stateless; POST requests"),
  );
  return app;
}

function rpcError(status: number, code: number, message: string): Response {
  return Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, {
    status,
    headers: status === 405 ? { allow: "POST" } : {},
  });
}

/** The body as text, or `undefined` when it is longer than {@linkcode MAX_MCP_BODY_BYTES}. */
async function boundedText(request: Request): Promise<string | undefined> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > MAX_MCP_BODY_BYTES) return undefined;
  if (!request.body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body) {
    size += chunk.length;
    if (size > MAX_MCP_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return new TextDecoder().decode(bytes);
}
