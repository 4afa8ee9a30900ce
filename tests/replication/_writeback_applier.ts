/**
 * Shared pieces of the write-back applier's tests: entries as a sandbox sends them, and
 * an applier over a real workspace.
 *
 * @module
 */
import { sha256Hex } from "../../lib/cas/mod.ts";
import { MasterState } from "../../lib/replication/mod.ts";
import { WriteBackApplier } from "../../lib/replication/writeback_applier.ts";
import type { WriteBackEntry, WriteOperation } from "../../lib/wire/mod.ts";
import type { Workspace } from "../../lib/workspace/mod.ts";

let nextSeq = 1n;

/** A write-back entry for `path` (each with the next `local_seq`), as a sandbox sends it. */
export function entry(
  path: string,
  operation: WriteOperation,
  content: string | null = null,
  seen = 0,
): WriteBackEntry {
  const bytes = content === null ? null : new TextEncoder().encode(content);
  return {
    local_seq: nextSeq++,
    filepath: path,
    operation,
    content_hash: bytes === null ? null : sha256Hex(bytes),
    content_bytes: bytes,
    size: BigInt(bytes?.length ?? 0),
    permissions: 0o100644n,
    is_deletion: operation.type === "Delete",
    master_rowid_seen: BigInt(seen),
  };
}

/** The master's applier over `workspace`, with a fresh replication state. */
export function applierOf(workspace: Workspace): WriteBackApplier {
  return new WriteBackApplier({
    workspace,
    store: workspace.store,
    cas: workspace.cas,
    filter: workspace.filter,
    state: new MasterState(workspace.store.db),
  });
}
