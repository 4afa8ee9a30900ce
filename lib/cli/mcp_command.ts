/**
 * `chronicle mcp`: the MCP server of the Chronicle running on a workspace, over stdio.
 * The tools live in the running process (`POST /mcp` on its control socket); this command
 * only carries newline-delimited JSON-RPC between stdin/stdout and that socket.
 *
 * @module
 */
import type { WorkspaceLayout } from "../workspace/mod.ts";
import { errorMessage } from "../log/mod.ts";
import { controlRequest } from "./control_client.ts";
import { CliError, UsageError } from "./errors.ts";
import { LOCATE_ARGS, locateFromArgs } from "./locate_workspace.ts";
import { parseCommandArgs } from "./parse_command_args.ts";

/** Longest JSON-RPC line read from stdin. */
const MAX_LINE_BYTES = 4 * 1024 * 1024;

type Message = { id?: string | number | null; method?: string };

/**
 * Runs the stdio bridge until stdin closes.
 *
 * @param args The arguments after `mcp`.
 * @returns The exit code: 1 when no Chronicle runs on the workspace.
 */
export async function mcpCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("mcp", args, LOCATE_ARGS);
  if (positionals.length > 0) {
    throw new UsageError(`chronicle mcp takes no arguments, got "${positionals[0]}"`);
  }
  const layout = locateFromArgs(values);
  const health = await controlRequest(layout, "/health");
  if (!health?.ok) throw new CliError(notRunning(layout));
  const writer = serialWriter();
  const out = writer.write;
  const inFlight = new Set<Promise<void>>();
  for await (const line of stdinLines()) {
    if (line === undefined) {
      out(rpcError(null, -32600, `Request longer than ${MAX_LINE_BYTES} bytes`));
      continue;
    }
    if (line.trim() === "") continue;
    const work = forward(layout, line, out).catch((error) =>
      console.error(`chronicle mcp: ${errorMessage(error)}`)
    );
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  }
  await Promise.all(inFlight);
  // The last answers may still be queued for stdout: the process exits once this returns.
  await writer.drained();
  return 0;
}

/** Sends one JSON-RPC line to the running Chronicle and writes what it answers. */
async function forward(
  layout: WorkspaceLayout,
  line: string,
  out: (text: string) => void,
): Promise<void> {
  let message: Message;
  try {
    message = JSON.parse(line);
  } catch {
    out(rpcError(null, -32700, "Parse error: the line is not JSON"));
    return;
  }
  const isRequest = typeof message === "object" && message !== null && "id" in message &&
    typeof message.method === "string";
  const response = await controlRequest(layout, "/mcp", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: line,
  }).catch(() => undefined);
  if (!response) {
    // Chronicle stopped since the bridge started: a tool call gets an error the model reads.
    if (!isRequest) return;
    const text = notRunning(layout);
    out(
      message.method === "tools/call"
        ? JSON.stringify({
          jsonrpc: "2.0",
          id: message.id,
          result: { content: [{ type: "text", text }], isError: true },
        })
        : rpcError(message.id ?? null, -32000, text),
    );
    return;
  }
  const body = await response.text();
  if (body.trim() === "") return; // 202: a notification or a response, nothing to say
  try {
    const answer = JSON.parse(body);
    for (const one of Array.isArray(answer) ? answer : [answer]) out(JSON.stringify(one));
  } catch {
    out(
      rpcError(
        isRequest ? message.id ?? null : null,
        -32603,
        `Chronicle answered ${response.status}`,
      ),
    );
  }
}

function notRunning(layout: WorkspaceLayout): string {
  return `No Chronicle is running on "${layout.root}": start it with chronicle ` +
    `"${layout.root}" (the MCP tools live in the running process)`;
}

function rpcError(id: string | number | null, code: number, message: string): string {
  return JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } });
}

/** Writes whole lines to stdout one after another, however many answers arrive at once. */
function serialWriter(): { write: (text: string) => void; drained: () => Promise<void> } {
  let chain = Promise.resolve();
  const encoder = new TextEncoder();
  return {
    write: (text) => {
      const bytes = encoder.encode(text + "\n");
      chain = chain.then(async () => {
        let written = 0;
        while (written < bytes.length) written += await Deno.stdout.write(bytes.subarray(written));
      });
    },
    drained: () => chain,
  };
}

/** Lines of stdin; `undefined` stands for a line longer than {@linkcode MAX_LINE_BYTES}. */
async function* stdinLines(): AsyncGenerator<string | undefined> {
  const decoder = new TextDecoder();
  let pending = "";
  let skipping = false;
  for await (const chunk of Deno.stdin.readable) {
    pending += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = pending.indexOf("\n")) !== -1) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      if (skipping) skipping = false;
      else yield line;
    }
    if (pending.length > MAX_LINE_BYTES) {
      if (!skipping) yield undefined;
      skipping = true;
      pending = "";
    }
  }
  if (!skipping && pending.trim() !== "") yield pending;
}
