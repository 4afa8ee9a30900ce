import type { Snapshots } from "../snapshot/mod.ts";
import type { Workspace } from "../workspace/mod.ts";

/** What the MCP tools work on: the running Chronicle's own objects, never a second copy. */
export interface McpContext {
  /** The workspace (store, CAS, write-through). */
  workspace: Workspace;
  /** Its snapshot engine. */
  snapshots: Snapshots;
  /** The full status `GET /status` shows (role, sequence, replication). */
  status(): Record<string, unknown>;
  /**
   * Waits until this replica holds everything its master held when asked.
   *
   * @returns The replica's answer, or `undefined` when this Chronicle is not a replica.
   */
  syncWait(timeoutMs: number): Promise<unknown> | undefined;
}

/** The server name and version MCP clients see. */
export interface McpIdentity {
  /** The server name. @default {"chronicle"} */
  name?: string;
  /** Chronicle's version. */
  version: string;
}
