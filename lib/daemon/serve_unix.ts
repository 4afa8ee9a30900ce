/** A REST server on a Unix socket that only this user may open. */
export async function serveUnix(
  path: string,
  handler: (request: Request) => Response | Promise<Response>,
): Promise<Deno.HttpServer<Deno.UnixAddr>> {
  await removeStaleSocket(path);
  const server = Deno.serve({ path, transport: "unix", onListen() {} }, handler);
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
