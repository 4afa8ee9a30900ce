/**
 * Requests to a running Chronicle over its control socket (`DATA/control.sock`).
 *
 * @module
 */

/** The control socket of the Chronicle whose data folder is `dataDir`. */
export function controlSocketIn(dataDir: string): string {
  return `${dataDir}/control.sock`;
}

/**
 * A request over the control socket at `socket`, its body read in full (so the client can
 * close before the caller looks at it).
 *
 * @throws {TypeError} When nothing answers on the socket.
 */
export async function controlFetch(
  socket: string,
  path: string,
  init: RequestInit = {},
): Promise<Response> {
  const client = Deno.createHttpClient({ proxy: { transport: "unix", path: socket } });
  try {
    const response = await fetch(`http://chronicle${path}`, { ...init, client });
    const body = await response.arrayBuffer();
    // An empty body stays null: a 204 or 304 may not have one.
    return new Response(body.byteLength === 0 ? null : body, {
      status: response.status,
      headers: response.headers,
    });
  } finally {
    client.close();
  }
}

/**
 * A request over the control socket at `socket`.
 *
 * @returns The status and the decoded JSON body (`undefined` when not JSON).
 */
export async function controlJson(
  socket: string,
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; body: unknown }> {
  const response = await controlFetch(socket, path, init);
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    return { status: response.status, body: undefined };
  }
}
