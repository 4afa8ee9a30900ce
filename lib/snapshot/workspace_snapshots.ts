import type { SnapshotConfig } from "./types.ts";
import { Snapshots } from "./snapshots.ts";
import type { Workspace } from "../workspace/mod.ts";

/** What {@linkcode openWorkspaceSnapshots} takes besides the workspace. */
export interface WorkspaceSnapshotsOptions {
  /** Retention limits. */
  config: SnapshotConfig;
  /** Take no snapshots at all. */
  offTheRecord: boolean;
}

/**
 * Opens the snapshot engine of an open workspace: its store and CAS, the workspace as the
 * writer that records rollback changes, and its ignore patterns.
 */
export function openWorkspaceSnapshots(
  workspace: Workspace,
  options: WorkspaceSnapshotsOptions,
): Snapshots {
  return Snapshots.open({
    root: workspace.root,
    cas: workspace.cas,
    store: workspace.store,
    writer: workspace,
    ignores: (path) => workspace.filter.local.ignores(path),
    dataDir: workspace.layout.dataDir,
    config: options.config,
    offTheRecord: options.offTheRecord,
  });
}
