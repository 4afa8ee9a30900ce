// @ts-types="@modelcontextprotocol/sdk/server/mcp"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { McpContext, McpIdentity } from "./context.ts";
import { registerDiffTools } from "./diff_tools.ts";
import { registerFileTools } from "./file_tools.ts";
import { registerOpsTools } from "./ops_tools.ts";
import { registerFileResources } from "./resources.ts";
import { registerUndoTools } from "./undo_tools.ts";

const INSTRUCTIONS = "Chronicle records every change to every file of this workspace as an " +
  "iteration. Before a destructive action, call take_snapshot; if the action went wrong, " +
  "snapshot_diff shows what it did and rollback_snapshot undoes it. file_history, " +
  "read_file and diff_file look at any past iteration; restore_file brings one back, " +
  "restore_workspace the whole tree (a dry run unless apply=true).";

/**
 * Chronicle's MCP server over a running Chronicle: every tool and the file resources.
 * One server serves one connection; make one per request (they are cheap).
 *
 * @param context The running Chronicle's workspace, snapshots and status.
 * @param identity Name and version to announce.
 * @returns The server, not yet connected.
 */
export function createMcpServer(context: McpContext, identity: McpIdentity): McpServer {
  const server = new McpServer(
    { name: identity.name ?? "chronicle", version: identity.version },
    { instructions: INSTRUCTIONS },
  );
  registerFileTools(server, context);
  registerDiffTools(server, context);
  registerUndoTools(server, context);
  registerOpsTools(server, context);
  registerFileResources(server, context);
  return server;
}
