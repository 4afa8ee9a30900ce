/**
 * Writes a command asks the running Chronicle to make (restore, rollback) rather than
 * making them from its own process: the running process then records each change once,
 * with its origin, before its own watcher can take the change for an edit on disk.
 *
 * @module
 */
import type { WorkspaceLayout } from "../workspace/mod.ts";
import { controlRequest, jsonOrFail } from "./control_client.ts";
import { printJson, println } from "./output.ts";

/** What a restore or rollback answers (`restoreResultToJson`, `rollbackResultToJson`). */
export interface ChangesJson {
  snapshot: { id: string } | null;
  applied: unknown[];
  problems: Array<{ path: string; message: string }>;
  [key: string]: unknown;
}

/**
 * POSTs `body` to `path` on the Chronicle running on the workspace.
 *
 * @param layout The workspace.
 * @param path The route, e.g. `/restore`.
 * @param body The JSON body, if any.
 * @returns The JSON answer, or `undefined` when no Chronicle runs there.
 * @throws {CliError} With the answer's message when it refused.
 */
export async function askRunning<T>(
  layout: WorkspaceLayout,
  path: string,
  body?: unknown,
): Promise<T | undefined> {
  const response = await controlRequest(layout, path, {
    method: "POST",
    ...(body === undefined
      ? {}
      : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
  });
  return response ? await jsonOrFail<T>(response) : undefined;
}

/**
 * Prints what a restore or rollback did: its JSON, or a headline and how to undo it; each
 * problem on stderr.
 *
 * @param headline The first line, given how many changes were applied.
 * @param result The JSON result.
 * @param json Whether to print JSON.
 * @returns The exit code: 1 when some path could not be changed.
 */
export function reportChanges(
  headline: (applied: number) => string,
  result: ChangesJson,
  json: boolean | undefined,
): number {
  if (json) printJson(result);
  else {
    println(headline(result.applied.length));
    if (result.snapshot) println(`undo with: chronicle rollback ${result.snapshot.id}`);
  }
  for (const problem of result.problems) {
    console.error(`error: ${problem.path}: ${problem.message}`);
  }
  return result.problems.length === 0 ? 0 : 1;
}
