/**
 * Requests to a running Chronicle over its control socket (`DATA/control.sock`), through
 * the CLI's own client.
 *
 * @module
 */
import { controlRequest } from "../../lib/cli/control_client.ts";
import { resolveLayout } from "../../lib/workspace/mod.ts";

/**
 * A request to the Chronicle whose data folder is `dataDir`, its body read in full.
 *
 * @throws {TypeError} When nothing answers on the socket.
 */
export async function controlFetch(
  dataDir: string,
  path: string,
  init: RequestInit = {},
): Promise<Response> {
  const response = await controlRequest(resolveLayout({ root: dataDir, dataDir }), path, init);
  if (!response) throw new TypeError(`No Chronicle answers in "${dataDir}"`);
  return response;
}

/**
 * A request to the Chronicle whose data folder is `dataDir`.
 *
 * @returns The status and the decoded JSON body (`undefined` when not JSON).
 */
export async function controlJson(
  dataDir: string,
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; body: unknown }> {
  const response = await controlFetch(dataDir, path, init);
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    return { status: response.status, body: undefined };
  }
}
