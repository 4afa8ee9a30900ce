import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { errorMessage } from "../log/mod.ts";
import { mimeTypeOf, readWindow, toBase64, windowText } from "./content.ts";
import type { McpContext } from "./context.ts";
import { pickIteration } from "./inputs.ts";

/** Resources per `resources/list` page. */
export const RESOURCE_PAGE = 100;
/** Largest content a resource read returns; larger files are read with `read_file` windows. */
export const MAX_RESOURCE_BYTES = 8 * 1024 * 1024;

const SCHEME = "chronicle://files/";

/**
 * The URI of a file at an iteration: `chronicle://files/{path}?iteration=N`, each path
 * segment percent-encoded. Pure.
 *
 * @example
 * ```ts
 * import { fileUri } from "./resources.ts";
 * if (fileUri("a b/c.md", 2) !== "chronicle://files/a%20b/c.md?iteration=2") throw new Error();
 * ```
 */
export function fileUri(path: string, iteration: number): string {
  return `${SCHEME}${path.split("/").map(encodeURIComponent).join("/")}?iteration=${iteration}`;
}

/**
 * Reads a file URI back: the path and the iteration (`undefined`: the latest). Pure.
 *
 * @throws {McpError} `InvalidParams` for another scheme, bad encoding or a bad iteration.
 */
export function parseFileUri(uri: string): { path: string; iteration: number | undefined } {
  if (!uri.startsWith(SCHEME)) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `Unknown resource "${uri}": expected ${SCHEME}PATH`,
    );
  }
  const rest = uri.slice(SCHEME.length);
  const query = rest.indexOf("?");
  const rawPath = query === -1 ? rest : rest.slice(0, query);
  const params = new URLSearchParams(query === -1 ? "" : rest.slice(query + 1));
  let path: string;
  try {
    path = decodeURIComponent(rawPath);
  } catch {
    throw new McpError(ErrorCode.InvalidParams, `Invalid percent-encoding in "${uri}"`);
  }
  const text = params.get("iteration");
  if (text === null) return { path, iteration: undefined };
  if (!/^[1-9]\d{0,15}$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new McpError(ErrorCode.InvalidParams, `Invalid iteration "${text}" in "${uri}"`);
  }
  return { path, iteration: Number(text) };
}

/**
 * Files as resources: `resources/list` pages through every live file at its latest
 * iteration (cursor-paginated), the template `chronicle://files/{path}?iteration={n}`
 * names any other, and `resources/read` returns text or a base64 blob with a MIME type.
 *
 * @param server The server to register them on.
 * @param context The running Chronicle.
 */
export function registerFileResources(server: McpServer, context: McpContext): void {
  const { workspace } = context;
  const low = server.server;
  low.registerCapabilities({ resources: {} });

  low.setRequestHandler(ListResourcesRequestSchema, (request) => {
    const start = cursorOffset(request.params?.cursor);
    const live = workspace.store.list();
    const page = live.slice(start, start + RESOURCE_PAGE);
    return {
      resources: page.map((iteration) => ({
        uri: fileUri(iteration.path, iteration.iteration),
        name: iteration.path,
        title: `${iteration.path} (iteration ${iteration.iteration})`,
        size: iteration.size,
      })),
      ...(start + page.length < live.length ? { nextCursor: String(start + page.length) } : {}),
    };
  });

  low.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [{
      uriTemplate: "chronicle://files/{+path}{?iteration}",
      name: "file-iteration",
      title: "A file at an iteration",
      description: "Any recorded file at any iteration (see the file_history tool); " +
        "without ?iteration, the latest.",
    }],
  }));

  low.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const uri = request.params.uri;
    const { path, iteration } = parseFileUri(uri);
    let found;
    try {
      found = pickIteration(workspace, path, { iteration });
    } catch (error) {
      throw new McpError(ErrorCode.InvalidParams, errorMessage(error));
    }
    if (found.size > MAX_RESOURCE_BYTES) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `"${found.path}" is ${found.size} bytes, more than a resource returns ` +
          `(${MAX_RESOURCE_BYTES}): read it in windows with the read_file tool`,
      );
    }
    const { bytes } = await readWindow(workspace.cas, found.hash, 0, found.size);
    const text = windowText(bytes, false, false);
    const mimeType = mimeTypeOf(found.path, text !== null);
    return {
      contents: [
        text === null ? { uri, mimeType, blob: toBase64(bytes) } : { uri, mimeType, text },
      ],
    };
  });
}

function cursorOffset(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  if (!/^\d{1,9}$/.test(cursor)) {
    throw new McpError(ErrorCode.InvalidParams, `Invalid cursor "${cursor}"`);
  }
  return Number(cursor);
}
