/**
 * Chronicle as a Model Context Protocol server: history, diffs, snapshots, rollback and
 * restores as tools an agent can call, and files at iterations as resources. The tools
 * live once, in the running Chronicle (`POST /mcp` on the control socket and `--http`);
 * `chronicle mcp` bridges stdio to the control socket.
 *
 * @module
 */
export type { McpContext, McpIdentity } from "./context.ts";

// Only the route here: the MCP SDK and zod (the tools, the resources and their URIs, in
// `resources.ts`) load at the first request, not with every Chronicle (issue #17).
export { MAX_MCP_BODY_BYTES, mcpRoutes } from "./http_route.ts";
