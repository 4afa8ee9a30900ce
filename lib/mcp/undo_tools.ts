import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp";
import { z } from "zod";
import {
  restorePlanToJson,
  restoreResultToJson,
  rollbackResultToJson,
  SNAPSHOT_ACTION_TYPES,
  type SnapshotRecord,
} from "../snapshot/mod.ts";
import { ORIGINS } from "../store/mod.ts";
import type { McpContext } from "./context.ts";
import {
  iterationJson,
  pathSchema,
  pickIteration,
  POINT_HELP,
  pointSchema,
  sequenceOf,
} from "./inputs.ts";
import { guarded, jsonResult } from "./results.ts";

/** Longest list of restore paths one call takes. */
const MAX_RESTORE_PATHS = 1000;
/** Planned changes shown in one answer; the count says how many there are in all. */
const PLAN_SHOWN = 200;

/**
 * The undo tools: `take_snapshot`, `list_snapshots`, `rollback_snapshot`, `restore_file`,
 * `restore_workspace`. Each change they make is snapshotted first, so it can be undone.
 *
 * @param server The server to register them on.
 * @param context The running Chronicle.
 */
export function registerUndoTools(server: McpServer, context: McpContext): void {
  const { workspace, snapshots } = context;
  const store = workspace.store;

  server.registerTool("take_snapshot", {
    title: "Snapshot before a destructive action",
    description: "Captures the files an action is about to change (call it BEFORE writing, " +
      "deleting or moving), so rollback_snapshot can put them back. Returns the snapshot ID " +
      "(or why none was needed). Cost: copies the affected files' current content once " +
      "(deduplicated).",
    inputSchema: {
      action_type: z.enum(SNAPSHOT_ACTION_TYPES).describe("What you are about to do"),
      path: pathSchema.describe("The file or folder the action changes (its source for a move)"),
      destination: z.string().min(1).max(4096).optional().describe(
        "For move_file, move_dir and copy_file: where it goes",
      ),
      transaction_id: z.string().min(1).max(64).optional().describe(
        "Group the snapshot into this open transaction",
      ),
    },
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
  }, (args) =>
    guarded("take_snapshot", async () => {
      const payload: Record<string, string> = { path: args.path };
      if (args.destination !== undefined) payload.destination = args.destination;
      const snap = await snapshots.snapshot(
        { type: args.action_type, payload },
        { transactionId: args.transaction_id ?? null },
      );
      if (!snap) {
        const reason = snapshots.offTheRecord
          ? "Chronicle runs off the record (--no-snapshots)"
          : `"${args.action_type}" on "${args.path}" changes no recorded files`;
        return jsonResult({ snapshot: null, reason });
      }
      return jsonResult({ snapshot: describe(snap), undo: `rollback_snapshot ${snap.id}` });
    }));

  server.registerTool("list_snapshots", {
    title: "List snapshots",
    description: "Lists the most recent pre-action snapshots, newest last: ID, number, " +
      "time, action, summary and the paths captured. Use it to find the snapshot to diff or " +
      "roll back. Cheap.",
    inputSchema: {
      limit: z.number().int().min(1).max(200).optional().describe("How many (default 20)"),
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  }, (args) =>
    guarded("list_snapshots", () => {
      const all = snapshots.list();
      const recent = all.slice(-(args.limit ?? 20));
      return jsonResult({ total: all.length, snapshots: recent.map(describe) });
    }));

  server.registerTool("rollback_snapshot", {
    title: "Roll back to a snapshot",
    description: "Puts every path a snapshot captured back as it was when it was taken " +
      "(as new iterations; nothing is lost). It snapshots the current state first and " +
      "returns that ID, so the rollback itself can be undone. Use snapshot_diff first to " +
      "see what it will change. Cost: rewrites the captured files.",
    inputSchema: {
      snapshot_id: z.string().min(1).max(64).describe("Snapshot ID or a unique prefix of it"),
    },
    annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
  }, (args) =>
    guarded("rollback_snapshot", async () => {
      const target = snapshots.get(args.snapshot_id);
      const result = await snapshots.rollback(target.id);
      return { ...jsonResult(rollbackResultToJson(result)), isError: result.problems.length > 0 };
    }));

  server.registerTool("restore_file", {
    title: "Restore one file's iteration",
    description: "Writes an earlier iteration of a file back to the workspace as a new " +
      "iteration (works for deleted files too: find the iteration with file_history). A " +
      "snapshot is taken first and its ID returned, so the restore can be rolled back. " +
      "Cost: one file write.",
    inputSchema: {
      path: pathSchema,
      iteration: z.number().int().min(1).describe("The iteration to bring back"),
    },
    annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
  }, (args) =>
    guarded("restore_file", async () => {
      const found = pickIteration(workspace, args.path, { iteration: args.iteration });
      const before = await snapshots.snapshot({
        type: "write_file",
        payload: { path: found.path },
      });
      const recorded = await workspace.writeContent(found.path, found.hash, found.mode, {
        origin: ORIGINS.restore,
      });
      const latest = recorded ?? store.latest(found.path)!;
      return jsonResult({
        restored: found.path,
        from_iteration: found.iteration,
        now: iterationJson(latest),
        snapshot_before: before?.id ?? null,
      });
    }));

  server.registerTool("restore_workspace", {
    title: "Restore the workspace to a moment",
    description: "Brings the whole workspace (or only `paths`) back to how it was at a " +
      "sequence or time, as new iterations. By default a dry run: returns the plan (each " +
      "path written or removed) and changes nothing; call again with apply=true to carry it " +
      "out, after a snapshot of every path it changes (returned, for rollback_snapshot). " +
      "Cost: one write per planned change.",
    inputSchema: {
      to: pointSchema.describe(`The moment to go back to: ${POINT_HELP}`),
      paths: z.array(z.string().min(1).max(4096)).max(MAX_RESTORE_PATHS).optional().describe(
        "Only these files or folders (default: everything)",
      ),
      apply: z.boolean().optional().describe(
        "false (default): only show the plan; true: carry it out",
      ),
    },
    annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
  }, (args) =>
    guarded("restore_workspace", async () => {
      const sequence = sequenceOf(store, args.to);
      const plan = snapshots.restorePlan({ sequence }, args.paths ?? []);
      const shown = {
        ...restorePlanToJson({ ...plan, changes: plan.changes.slice(0, PLAN_SHOWN) }),
        total_changes: plan.changes.length,
        ...(plan.changes.length > PLAN_SHOWN
          ? { note: `${PLAN_SHOWN} of ${plan.changes.length} changes shown; pass paths to narrow` }
          : {}),
      };
      if (args.apply !== true) {
        return jsonResult({
          dry_run: true,
          plan: shown,
          next: plan.changes.length === 0
            ? "Nothing to do: the workspace already matches that moment"
            : `Call restore_workspace again with to=${sequence} and apply=true to carry out ` +
              `these ${plan.changes.length} change(s)`,
        });
      }
      if (plan.changes.length === 0) {
        return jsonResult({ dry_run: false, plan: shown, applied: [] });
      }
      const result = await snapshots.restoreTo(plan);
      return {
        ...jsonResult({ dry_run: false, ...restoreResultToJson(result), plan: shown }),
        isError: result.problems.length > 0,
      };
    }));
}

function describe(snap: SnapshotRecord): Record<string, unknown> {
  return {
    id: snap.id,
    number: snap.number,
    time: new Date(snap.timestamp).toISOString(),
    action_type: snap.actionType,
    summary: snap.summary,
    transaction_id: snap.transactionId,
    paths: snap.files.slice(0, 50).map((file) => file.path),
    ...(snap.files.length > 50 ? { more_paths: snap.files.length - 50 } : {}),
  };
}
