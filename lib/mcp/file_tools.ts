import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp";
import { S_IFLNK, S_IFMT } from "../store/mod.ts";
import { z } from "zod";
import { readWindow, toBase64, windowText } from "./content.ts";
import type { McpContext } from "./context.ts";
import {
  folderOf,
  iterationJson,
  offsetSchema,
  pathSchema,
  pickIteration,
  POINT_HELP,
  pointSchema,
  sequenceOf,
} from "./inputs.ts";
import { nextPage, summarizeListing } from "./listing.ts";
import { guarded, jsonResult, ToolError } from "./results.ts";

/** Default and largest window `read_file` returns. */
export const READ_DEFAULT_BYTES = 64 * 1024;
/** Largest window `read_file` returns in one call. */
export const READ_MAX_BYTES = 1024 * 1024;

const READ_ONLY = { readOnlyHint: true, openWorldHint: false } as const;

/**
 * The reading tools: `list_files`, `read_file`, `file_history`, `recent_changes`.
 *
 * @param server The server to register them on.
 * @param context The running Chronicle.
 */
export function registerFileTools(server: McpServer, context: McpContext): void {
  const { workspace } = context;
  const store = workspace.store;

  server.registerTool("list_files", {
    title: "List files",
    description: "Lists the files Chronicle holds under a folder, now or as they were at a " +
      "past sequence or time: path, size, iteration, sequence, time, origin. Use it to see " +
      "what exists (or existed) before reading or restoring. Cheap (one database query); " +
      "paged with offset/limit.",
    inputSchema: {
      path: z.string().max(4096).optional().describe(
        "Folder to list; omit for the whole workspace",
      ),
      depth: z.number().int().min(1).max(64).optional().describe(
        "Levels below the folder to show files of; deeper files are summarized as folders",
      ),
      at: pointSchema.optional().describe(`List the tree as it was then: ${POINT_HELP}`),
      offset: offsetSchema,
      limit: z.number().int().min(1).max(1000).optional().describe(
        "Entries per page (default 200)",
      ),
    },
    annotations: READ_ONLY,
  }, (args) =>
    guarded("list_files", () => {
      const dir = folderOf(workspace, args.path);
      const atSequence = args.at === undefined ? undefined : sequenceOf(store, args.at);
      const live = store.list({ dir, ...(atSequence === undefined ? {} : { atSequence }) });
      const entries = summarizeListing(live, dir, args.depth);
      const offset = args.offset ?? 0;
      const limit = args.limit ?? 200;
      const page = entries.slice(offset, offset + limit);
      return jsonResult({
        folder: dir,
        at_sequence: atSequence ?? store.sequence(),
        total: entries.length,
        entries: page,
        ...nextPage(offset, page.length, entries.length),
      });
    }));

  server.registerTool("read_file", {
    title: "Read a file, now or in the past",
    description: "Returns a file's content as Chronicle recorded it: the latest iteration, " +
      "iteration N, or the one current at a past time or sequence. Text comes back as text, " +
      "binary content as a base64 resource. Reads at most `limit` bytes (default 64 KiB, at " +
      "most 1 MiB) from `offset`; a longer file says which offset to pass next. Cost grows " +
      "with the bytes returned.",
    inputSchema: {
      path: pathSchema,
      iteration: z.number().int().min(1).optional().describe("Iteration number from file_history"),
      at: pointSchema.optional().describe(`The iteration current at: ${POINT_HELP}`),
      offset: z.number().int().min(0).optional().describe("Byte offset to start at (default 0)"),
      limit: z.number().int().min(1).optional().describe(
        `Bytes to return (default ${READ_DEFAULT_BYTES}, at most ${READ_MAX_BYTES})`,
      ),
    },
    annotations: READ_ONLY,
  }, (args) =>
    guarded("read_file", async () => {
      const limit = args.limit ?? READ_DEFAULT_BYTES;
      if (limit > READ_MAX_BYTES) {
        throw new ToolError(
          `limit ${limit} is too large: read at most ${READ_MAX_BYTES} bytes per call and ` +
            `page with offset`,
        );
      }
      if (args.iteration !== undefined && args.at !== undefined) {
        throw new ToolError("Give either iteration or at, not both");
      }
      const found = pickIteration(workspace, args.path, args);
      const offset = args.offset ?? 0;
      if (offset > found.size) {
        throw new ToolError(
          `offset ${offset} is past the end of "${found.path}" (${found.size} bytes)`,
        );
      }
      const window = await readWindow(workspace.cas, found.hash, offset, limit);
      const end = offset + window.bytes.length;
      const isLink = (found.mode & S_IFMT) === S_IFLNK;
      const header = `${found.path} iteration ${found.iteration} (sequence ${found.sequence}, ` +
        `${found.size} bytes, origin ${found.origin}${isLink ? ", a symbolic link" : ""})` +
        (offset > 0 || end < found.size ? `; bytes ${offset} to ${end}` : "") +
        (end < found.size ? `; truncated: call again with offset=${end} for the rest` : "");
      const text = windowText(window.bytes, offset > 0, end < found.size);
      if (text !== null) {
        return { content: [{ type: "text", text: header }, { type: "text", text }] };
      }
      return {
        content: [
          { type: "text", text: `${header}; binary content, base64-encoded below` },
          {
            type: "resource",
            resource: {
              uri: `chronicle://files/${found.path}?iteration=${found.iteration}`,
              mimeType: "application/octet-stream",
              blob: toBase64(window.bytes),
            },
          },
        ],
      };
    }));

  server.registerTool("file_history", {
    title: "A file's history",
    description: "Lists every iteration of one file, oldest first: iteration number, " +
      "sequence, time, size, hash, origin (who changed it) and whether it was a deletion. " +
      "Use it to find the iteration to read, diff or restore, including for a deleted file. " +
      "Cheap; paged with offset/limit.",
    inputSchema: {
      path: pathSchema,
      offset: offsetSchema,
      limit: z.number().int().min(1).max(1000).optional().describe(
        "Iterations per page (default 100)",
      ),
    },
    annotations: READ_ONLY,
  }, (args) =>
    guarded("file_history", () => {
      const path = workspace.checkPath(args.path);
      const history = store.history(path);
      if (history.length === 0) {
        throw new ToolError(`Unknown path "${path}": Chronicle has never recorded it`);
      }
      const offset = args.offset ?? 0;
      const page = history.slice(offset, offset + (args.limit ?? 100));
      return jsonResult({
        path,
        total: history.length,
        iterations: page.map(iterationJson),
        ...nextPage(offset, page.length, history.length),
      });
    }));

  server.registerTool("recent_changes", {
    title: "Recent changes across the workspace",
    description: "Lists changes to any file after a sequence or time, oldest first, " +
      "optionally only those by one origin (local, api, restore, rollback, or a sandbox id). " +
      "Use it to see what an action or another agent changed. Cheap; pass next_since to page.",
    inputSchema: {
      since: pointSchema.optional().describe(
        `Changes after this moment: ${POINT_HELP}. Default: the last 50 changes`,
      ),
      origin: z.string().min(1).max(256).optional().describe("Only changes by this origin"),
      limit: z.number().int().min(1).max(1000).optional().describe(
        "Changes per page (default 100)",
      ),
    },
    annotations: READ_ONLY,
  }, (args) =>
    guarded("recent_changes", () => {
      const newest = store.sequence();
      const since = args.since === undefined
        ? Math.max(0, newest - 50)
        : sequenceOf(store, args.since);
      const limit = args.limit ?? 100;
      const changes = store.changesSince(since, {
        limit: limit + 1,
        ...(args.origin === undefined ? {} : { origin: args.origin }),
      });
      const page = changes.slice(0, limit);
      return jsonResult({
        since_sequence: since,
        newest_sequence: newest,
        changes: page.map(iterationJson),
        ...(changes.length > limit ? { truncated: true, next_since: page.at(-1)!.sequence } : {}),
      });
    }));
}
