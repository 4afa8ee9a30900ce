import type { WorkspaceLayout } from "../workspace/mod.ts";
import { CliError } from "./errors.ts";

/**
 * Sends a REST request to the Chronicle running on this workspace, over its control
 * socket (`DATA/control.sock`).
 *
 * @returns The response, or `undefined` when no Chronicle is running there.
 */
export async function controlRequest(
  layout: WorkspaceLayout,
  path: string,
  init: RequestInit = {},
): Promise<Response | undefined> {
  try {
    await Deno.lstat(layout.controlSocket);
  } catch {
    return undefined;
  }
  const client = Deno.createHttpClient({
    proxy: { transport: "unix", path: layout.controlSocket },
  });
  try {
    const response = await fetch(`http://chronicle${path}`, { ...init, client });
    const body = await response.arrayBuffer();
    // An empty body stays null: a 204 or 304 may not have one.
    return new Response(body.byteLength === 0 ? null : body, {
      status: response.status,
      headers: response.headers,
    });
  } catch (error) {
    if (isNotRunning(error)) return undefined;
    throw error;
  } finally {
    client.close();
  }
}

/** Like {@linkcode controlRequest}, but a missing Chronicle is an error that says so. */
export async function requireRunning(
  layout: WorkspaceLayout,
  path: string,
  init: RequestInit = {},
): Promise<Response> {
  const response = await controlRequest(layout, path, init);
  if (!response) throw new CliError(`No Chronicle is running on "${layout.root}"`);
  return response;
}

/** Reads a JSON answer, turning a REST error body into a {@linkcode CliError}. */
export async function jsonOrFail<T>(response: Response): Promise<T> {
  const body = await response.json().catch(() => undefined);
  if (!response.ok) throw new CliError(refusal(response, body));
  return body as T;
}

/**
 * What a REST error answer says: its body's `error.message`, or its status.
 *
 * @param response The answer, not OK.
 * @param body Its body, parsed as JSON (`undefined` when it is not).
 */
export function refusal(response: Response, body: unknown): string {
  const message = (body as { error?: { message?: string } } | undefined)?.error?.message;
  return message ?? `Chronicle answered ${response.status}`;
}

/**
 * Whether a failed request to the control socket means nobody listens there.
 *
 * @param error What the request threw.
 * @returns Whether no Chronicle runs on the workspace.
 */
export function isNotRunning(error: unknown): boolean {
  const text = error instanceof Error ? `${error.message} ${String(error.cause ?? "")}` : "";
  // Only "nobody listens on this socket": any other failure is a real error to report.
  return /ECONNREFUSED|ENOENT|Connection refused|No such file or directory/i.test(text);
}
