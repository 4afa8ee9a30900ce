import { type HttpListener, type ListenerLimit, serveHttp } from "../net/mod.ts";

/** Options of {@linkcode serveUnix}. */
export interface ServeUnixOptions {
  /** This listener's share of the process's connections. */
  limit: ListenerLimit;
  /** Milliseconds to send a request head. */
  handshakeTimeoutMs: number;
  /** Milliseconds idle between requests. */
  idleTimeoutMs: number;
}

/** A REST server on a Unix socket that only this user may open. */
export async function serveUnix(
  path: string,
  handler: (request: Request) => Response | Promise<Response>,
  options: ServeUnixOptions,
): Promise<HttpListener> {
  await removeStaleSocket(path);
  const server = await serveHttp({ address: { path }, fetch: handler, ...options });
  await Deno.chmod(path, 0o600);
  return server;
}

/**
 * Removes a socket file left by a process that died. A socket someone still answers on
 * means another Chronicle is running on this data folder, which is an error.
 */
async function removeStaleSocket(path: string): Promise<void> {
  try {
    await Deno.lstat(path);
  } catch {
    return;
  }
  if (await answers(path)) {
    throw new Error(`Another Chronicle is already running here (socket "${path}" answers)`);
  }
  await Deno.remove(path).catch(() => undefined);
}

/** Whether something accepts connections on the socket at `path`. */
async function answers(path: string): Promise<boolean> {
  try {
    const conn = await Deno.connect({ transport: "unix", path });
    conn.close();
    return true;
  } catch {
    return false;
  }
}
