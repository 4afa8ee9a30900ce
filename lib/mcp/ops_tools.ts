import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp";
import { z } from "zod";
import { verifyReportToJson } from "../snapshot/mod.ts";
import type { McpContext } from "./context.ts";
import { guarded, jsonResult, ToolError } from "./results.ts";

/** Longest `wait_for_sync` may block. */
export const MAX_SYNC_WAIT_MS = 10 * 60_000;

/**
 * The operational tools: `verify_chain`, `status`, `wait_for_sync`.
 *
 * @param server The server to register them on.
 * @param context The running Chronicle.
 */
export function registerOpsTools(server: McpServer, context: McpContext): void {
  const { snapshots } = context;

  server.registerTool("verify_chain", {
    title: "Verify the snapshot chain",
    description: "Recomputes every snapshot's hash, checks every link of the chain and (by " +
      "default) every backed-up content object. Returns ok and any problems. Use it before " +
      "trusting a rollback after something odd happened. Cost: reads every snapshot, and " +
      "with content=true every backed-up object (slow on large workspaces).",
    inputSchema: {
      content: z.boolean().optional().describe("Also check backed-up content (default true)"),
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  }, (args) =>
    guarded("verify_chain", async () => {
      const report = await snapshots.verify({ content: args.content !== false });
      return { ...jsonResult(verifyReportToJson(report)), isError: !report.ok };
    }));

  server.registerTool("status", {
    title: "Chronicle status",
    description: "Returns this Chronicle's role (standalone, master, replica, local-sync), " +
      "newest sequence, store size and replication: on a master each replica with its " +
      "acknowledged sequence and lag; on a replica its master, applied sequence, pending " +
      "write-backs and conflicts. Cheap.",
    inputSchema: {},
    annotations: { readOnlyHint: true, openWorldHint: false },
  }, () => guarded("status", () => jsonResult(context.status())));

  server.registerTool("wait_for_sync", {
    title: "Wait for a replica to catch up",
    description: "On a replica (a sandbox): returns once it holds everything its master " +
      "held when asked, or when the timeout passes. Use it before reading files the agent " +
      "host just wrote. Blocks up to timeout_ms; an error on a master or standalone " +
      "Chronicle.",
    inputSchema: {
      timeout_ms: z.number().int().min(0).max(MAX_SYNC_WAIT_MS).optional().describe(
        "Longest to wait (default 60000)",
      ),
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  }, (args) =>
    guarded("wait_for_sync", async () => {
      const waiting = context.syncWait(args.timeout_ms ?? 60_000);
      if (!waiting) {
        throw new ToolError(
          "This Chronicle is not a replica, so there is nothing to wait for: " +
            "wait_for_sync works on a sandbox started with --connect or --ws-connect",
        );
      }
      const result = await waiting as { satisfied?: boolean };
      // A barrier not reached in time is an error the model should notice, with the figures.
      return { ...jsonResult(result), isError: result.satisfied === false };
    }));
}
