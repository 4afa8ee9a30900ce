import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp";
import { z } from "zod";
import type { Cas } from "../cas/mod.ts";
import { diffToJson } from "../snapshot/mod.ts";
import type { Iteration } from "../store/mod.ts";
import { unifiedDiff } from "../textdiff/mod.ts";
import type { McpContext } from "./context.ts";
import { offsetSchema, pathSchema } from "./inputs.ts";
import { capText, guarded, jsonResult, textResult, ToolError } from "./results.ts";

/** Largest side of a diff: a larger file is refused with a note to read windows of it. */
export const MAX_DIFF_BYTES = 8 * 1024 * 1024;

/** Longest patch of one change in a `snapshot_diff` answer, so one file cannot fill it. */
export const MAX_PATCH_CHARS = 20_000;

const READ_ONLY = { readOnlyHint: true, openWorldHint: false } as const;

/**
 * The diff tools: `diff_file` (two iterations of one file) and `snapshot_diff` (a
 * snapshot against now).
 *
 * @param server The server to register them on.
 * @param context The running Chronicle.
 */
export function registerDiffTools(server: McpServer, context: McpContext): void {
  const { workspace, snapshots } = context;
  const store = workspace.store;

  server.registerTool("diff_file", {
    title: "Diff two iterations of a file",
    description: "Returns the unified diff (as `diff -u` prints it) between two iterations " +
      "of one file: `from` and `to` (default: the latest). A deletion counts as empty " +
      "content; binary content gives a one-line note. Use it to see what an edit changed " +
      "before deciding to restore. Cost grows with the file size (at most 8 MiB a side); " +
      "long diffs are cut at 60,000 characters.",
    inputSchema: {
      path: pathSchema,
      from: z.number().int().min(1).describe("The older iteration (see file_history)"),
      to: z.number().int().min(1).optional().describe("The newer iteration; default the latest"),
      context: z.number().int().min(0).max(100).optional().describe(
        "Unchanged lines around each change (default 3)",
      ),
    },
    annotations: READ_ONLY,
  }, (args) =>
    guarded("diff_file", async () => {
      const path = workspace.checkPath(args.path);
      const from = iterationOf(store.iteration(path, args.from), path, args.from);
      const to = args.to === undefined
        ? iterationOf(store.latest(path), path, undefined)
        : iterationOf(store.iteration(path, args.to), path, args.to);
      const diff = unifiedDiff(
        await contentOf(workspace.cas, from),
        await contentOf(workspace.cas, to),
        {
          oldLabel: `a/${path}@${from.iteration}`,
          newLabel: `b/${path}@${to.iteration}`,
          ...(args.context === undefined ? {} : { context: args.context }),
        },
      );
      if (diff.identical) {
        return textResult(
          `Iterations ${from.iteration} and ${to.iteration} of "${path}" are identical`,
        );
      }
      const summary = diff.binary ? "" : `${diff.added} line(s) added, ${diff.removed} removed\n`;
      return textResult(capText(summary + diff.text, "pass a smaller context"));
    }));

  server.registerTool("snapshot_diff", {
    title: "What changed since a snapshot",
    description: "Compares a pre-action snapshot with the workspace now: each changed path " +
      "(created, modified, deleted) with sizes and hashes, and with `patch` (default true) " +
      "the unified diff of each modified text file. Use it after an action to check what it " +
      "did before rolling it back. Cost grows with the files changed; paged with offset/limit.",
    inputSchema: {
      snapshot_id: z.string().min(1).max(64).describe("Snapshot ID or a unique prefix of it"),
      patch: z.boolean().optional().describe("Include unified diffs of text files (default true)"),
      offset: offsetSchema,
      limit: z.number().int().min(1).max(200).optional().describe("Changes per page (default 50)"),
    },
    annotations: READ_ONLY,
  }, (args) =>
    guarded("snapshot_diff", async () => {
      const diff = diffToJson(await snapshots.diff(args.snapshot_id));
      const changes = diff.changes as Array<Record<string, unknown>>;
      const offset = args.offset ?? 0;
      const page = changes.slice(offset, offset + (args.limit ?? 50));
      if (args.patch !== false) {
        for (const change of page) change.patch = await patchOf(workspace.cas, change);
      }
      return jsonResult({
        snapshot_id: diff.snapshot_id,
        total: changes.length,
        changes: page,
        ...(offset + page.length < changes.length
          ? { truncated: true, next_offset: offset + page.length }
          : {}),
      });
    }));
}

function iterationOf(found: Iteration | undefined, path: string, n: number | undefined): Iteration {
  if (found) return found;
  throw new ToolError(
    n === undefined
      ? `Unknown path "${path}": Chronicle has never recorded it`
      : `Unknown iteration ${n} of "${path}": see file_history for the ones it has`,
  );
}

async function contentOf(cas: Cas, iteration: Iteration): Promise<Uint8Array> {
  if (iteration.deleted) return new Uint8Array();
  if (iteration.size > MAX_DIFF_BYTES) {
    throw new ToolError(
      `Iteration ${iteration.iteration} of "${iteration.path}" is ${iteration.size} bytes, ` +
        `too large to diff (at most ${MAX_DIFF_BYTES}): read windows of it with read_file`,
    );
  }
  return await cas.readBytes(iteration.hash);
}

/** The unified diff of one snapshot change, or a note when it has none. */
async function patchOf(cas: Cas, change: Record<string, unknown>): Promise<string> {
  if (change.kind === "dir") return "(folder)";
  const sides: Uint8Array[] = [];
  for (const key of ["before", "after"]) {
    const hash = change[`${key}_hash`] as string | null;
    const size = change[`${key}_size`] as number | null;
    if (hash === null) {
      sides.push(new Uint8Array());
      continue;
    }
    if ((size ?? 0) > MAX_DIFF_BYTES) return "(too large to diff)";
    if (!(await cas.has(hash, { throughTier: true }))) return "(content not in the store yet)";
    sides.push(await cas.readBytes(hash));
  }
  const path = change.path as string;
  const diff = unifiedDiff(sides[0]!, sides[1]!, {
    oldLabel: `a/${path}@snapshot`,
    newLabel: `b/${path}@now`,
  });
  if (diff.identical) return "(content identical; mode or kind changed)";
  return capText(
    diff.text,
    `the patch of "${path}" is cut: diff_file shows its iterations`,
    MAX_PATCH_CHARS,
  );
}
