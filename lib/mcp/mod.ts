/**
 * Chronicle as a Model Context Protocol server: history, diffs, snapshots, rollback and
 * restores as tools an agent can call, and files at iterations as resources. The tools
 * live once, in the running Chronicle (`POST /mcp` on the control socket and `--http`);
 * `chronicle mcp` bridges stdio to the control socket.
 *
 * @module
 */
export type { McpContext, McpIdentity } from "./context.ts";

export { MAX_MCP_BODY_BYTES, mcpRoutes } from "./http_route.ts";
export { fileUri, parseFileUri } from "./resources.ts";
