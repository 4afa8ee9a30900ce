/**
 * Helpers for the MCP tests: a running Chronicle in a child process, and tool calls through
 * the SDK's real `Client` (in the test process, a separate process from the server).
 *
 * @module
 */
// @ts-types="@modelcontextprotocol/sdk/client/index"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { BINARY_PERMISSIONS } from "../../lib/cli/sync_commands.ts";
import { type Child, MAIN, PROJECT_ROOT, spawnChronicle } from "../_helpers/processes.ts";
import { waitFor } from "../_helpers/wait_for.ts";

/** A Chronicle running in a child process, with its REST port when `--http` was asked. */
export interface Running {
  child: Child;
  /** The bound `--http` port, or 0. */
  port: number;
}

/**
 * Starts `chronicle ROOT ...args` and waits until it is running (initial scan done); with
 * `--http 127.0.0.1:0` among the args, reads the bound port from its log.
 */
export async function startChronicle(root: string, args: string[] = []): Promise<Running> {
  const child = spawnChronicle([root, ...args]);
  await waitFor(
    "chronicle running",
    () => child.output().includes("chronicle running"),
    { timeoutMs: 60_000 },
  ).catch(async (error) => {
    await child.stop();
    throw new Error(`${error.message}\n${child.output()}`);
  });
  const port = /REST API listening .*port=(\d+)/.exec(child.output());
  return { child, port: port ? Number(port[1]) : 0 };
}

/** What one tool call answered, its text blocks joined. */
export interface ToolAnswer {
  isError: boolean;
  text: string;
  // deno-lint-ignore no-explicit-any -- the tools' JSON, read field by field in the tests
  json: any;
  content: Array<Record<string, unknown>>;
}

/** Calls a tool and reads its answer; the JSON is parsed when the text is JSON. */
export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<ToolAnswer> {
  const result = await client.callTool({ name, arguments: args });
  const content = result.content as Array<Record<string, unknown>>;
  const text = content.filter((c) => c.type === "text").map((c) => c.text as string).join("\n");
  let json: unknown = undefined;
  try {
    json = JSON.parse(text);
  } catch { /* not JSON */ }
  return { isError: result.isError === true, text, json, content };
}

/** Calls a tool and fails the test when it answers an error. */
export async function ok(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<ToolAnswer> {
  const answer = await call(client, name, args);
  if (answer.isError) throw new Error(`${name} failed: ${answer.text}`);
  return answer;
}

/** Waits until a tool's answer satisfies `check` (Chronicle records disk changes shortly). */
export async function until(
  what: string,
  client: Client,
  name: string,
  args: Record<string, unknown>,
  check: (answer: ToolAnswer) => boolean,
): Promise<ToolAnswer> {
  return await waitFor(what, async () => {
    const answer = await call(client, name, args);
    return check(answer) ? answer : undefined;
  }, { timeoutMs: 30_000 });
}

/** Where `chronicle mcp` runs and how it finds its workspace. */
export interface StdioOptions {
  /** The location flags. @default {["-C", root]} */
  locate?: string[];
  /** The working folder (the upward search starts there). @default {PROJECT_ROOT} */
  cwd?: string;
}

/**
 * `chronicle mcp -C ROOT` as an MCP client spawns it: `deno run` with the binaries'
 * permissions (and the project's config, so it runs from any folder).
 */
export function stdioTransport(root: string, options: StdioOptions = {}): StdioClientTransport {
  return new StdioClientTransport({
    command: Deno.execPath(),
    args: [
      "run",
      "--config",
      `${PROJECT_ROOT}/deno.json`,
      ...BINARY_PERMISSIONS,
      MAIN,
      "mcp",
      ...(options.locate ?? ["-C", root]),
    ],
    cwd: options.cwd ?? PROJECT_ROOT,
    env: { NO_COLOR: "1", PATH: Deno.env.get("PATH") ?? "", HOME: Deno.env.get("HOME") ?? "" },
    stderr: "pipe",
  });
}
