import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { getRequestListener } from "@hono/node-server";
import type { AccessCheck, Refusal, RequestHead } from "./access.ts";
import { acceptConnections } from "./accept_loop.ts";
import type { ConnectionSlot, ListenerLimit } from "./connection_limits.ts";
import { type ConnSocket, connSocket } from "./_conn_socket.ts";

/** Where an HTTP listener binds: a TCP address or a Unix socket path. */
export type HttpAddress = { hostname: string; port: number } | { path: string };

/** Options for {@linkcode serveHttp}. */
export interface ServeHttpOptions {
  /** Where to listen. */
  address: HttpAddress;
  /** Answers ordinary requests. @default {undefined} (426 or 404 for every request) */
  fetch?: (request: Request) => Response | Promise<Response>;
  /** Takes over a connection asking for a protocol upgrade, once it passed `access`. */
  onUpgrade?: (request: IncomingMessage, socket: Duplex, head: Uint8Array) => void;
  /** Who may be served; checked before `fetch` and `onUpgrade`. @default {undefined} (everyone) */
  access?: AccessCheck | undefined;
  /** This listener's connection count, drawing on the process-wide limits. */
  limit: ListenerLimit;
  /**
   * Milliseconds a new connection has to send its first complete request head before it
   * is closed.
   * @default {10000}
   */
  handshakeTimeoutMs?: number | undefined;
  /** Milliseconds a connection may stay silent between requests before it is closed. @default {60000} */
  idleTimeoutMs?: number | undefined;
  /** Called when a connection or request is refused, for logging. */
  onRefused?: ((remote: string, reason: string) => void) | undefined;
}

/** A running HTTP listener. */
export interface HttpListener {
  /** `host:port` or the socket path. */
  readonly address: string;
  /** The bound TCP port (useful with port 0), or `undefined` on a Unix socket. */
  readonly port: number | undefined;
  /** Connections open on it now. */
  readonly connections: number;
  /** Stops listening and closes every connection it still serves. */
  close(): Promise<void>;
}

/**
 * Serves HTTP with `node:http` over connections this function accepts itself: every
 * connection counts against the listener's and the process's limits (beyond them it gets
 * a 503 and is closed at once), one that has not sent its first request head within the
 * handshake timeout is closed, and one idle past the idle timeout too. The accept loop is
 * ours because `node:http`'s own (in Deno 2.9) silently stops accepting for good after one
 * failed accept (`EMFILE`), and `Deno.serve`'s ends the process: here a failed accept
 * waits a moment and goes on, so a flood leaves the listener serving once it passed.
 *
 * @param options See {@linkcode ServeHttpOptions}.
 * @returns The listener, once bound.
 * @throws {Error} When the address cannot be bound.
 *
 * @example A loopback listener on a free port
 * ```ts ignore
 * const limits = new ConnectionLimits({ maxTotal: 100 });
 * const server = await serveHttp({
 *   address: { hostname: "127.0.0.1", port: 0 },
 *   fetch: () => new Response("ok"),
 *   limit: limits.listener(50),
 * });
 * await server.close();
 * ```
 */
// deno-lint-ignore require-await -- async so that a bind error rejects rather than throws
export async function serveHttp(options: ServeHttpOptions): Promise<HttpListener> {
  const handshakeMs = options.handshakeTimeoutMs ?? 10_000;
  const idleMs = options.idleTimeoutMs ?? 60_000;
  const server = createServer({
    requestTimeout: 0,
    keepAliveTimeout: idleMs,
  });
  const handle = options.fetch
    ? getRequestListener(options.fetch, { overrideGlobalObjects: false })
    : null;
  const sockets = new Set<ConnSocket>();
  const handshakes = new Map<ConnSocket, ReturnType<typeof setTimeout>>();
  const active = new Map<ConnSocket, number>();
  const remoteOf = (socket: ConnSocket) =>
    socket.remoteAddress ? `${socket.remoteAddress}:${socket.remotePort}` : "unix";
  const settle = (socket: ConnSocket) => {
    clearTimeout(handshakes.get(socket));
    handshakes.delete(socket);
  };

  const track = (socket: ConnSocket, slot: ConnectionSlot) => {
    socket.on("error", () => {}); // a reset by the peer is an ordinary end here
    sockets.add(socket);
    socket.once("close", () => {
      slot.release();
      sockets.delete(socket);
      settle(socket);
      active.delete(socket);
    });
    const timer = setTimeout(() => {
      options.onRefused?.(remoteOf(socket), `no request within ${handshakeMs} ms`);
      socket.destroy();
    }, handshakeMs);
    handshakes.set(socket, timer);
    socket.setTimeout(idleMs, () => {
      // A request being answered (a long poll) is not idleness.
      if ((active.get(socket) ?? 0) === 0) socket.destroy();
    });
  };

  server.on("request", (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket as ConnSocket;
    if (!sockets.has(socket)) return void socket.destroy(); // refused at accept
    settle(socket);
    active.set(socket, (active.get(socket) ?? 0) + 1);
    response.once("close", () => active.set(socket, Math.max(0, (active.get(socket) ?? 1) - 1)));
    closeIfBodyUnread(request, response);
    const refusal = options.access?.(headOf(request));
    if (refusal) {
      options.onRefused?.(remoteOf(socket), refusal.message);
      refuseResponse(response, refusal);
      return;
    }
    if (!handle) {
      refuseResponse(response, {
        status: 426,
        code: "upgrade_required",
        message: "Expected a WebSocket upgrade",
      });
      return;
    }
    void handle(request, response);
  });

  server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Uint8Array) => {
    const raw = socket as ConnSocket;
    if (!sockets.has(raw)) return void raw.destroy(); // refused at accept
    settle(raw);
    raw.setTimeout(0);
    const refusal = options.access?.(headOf(request)) ??
      (options.onUpgrade ? null : { status: 404, code: "not_found", message: "No upgrade here" });
    if (refusal) {
      options.onRefused?.(remoteOf(raw), refusal.message);
      refuseRaw(raw, refusal);
      return;
    }
    options.onUpgrade!(request, socket, head);
  });
  server.on("clientError", (_error: Error, socket: Duplex) => {
    refuseRaw(socket as ConnSocket, {
      status: 400,
      code: "bad_request",
      message: "Malformed request",
    });
  });

  const listener = "path" in options.address
    ? Deno.listen({ transport: "unix", path: options.address.path })
    : Deno.listen({ hostname: options.address.hostname, port: options.address.port });
  const port = listener.addr.transport === "tcp" ? listener.addr.port : undefined;
  const address = "path" in options.address
    ? options.address.path
    : `${
      options.address.hostname.includes(":")
        ? `[${options.address.hostname}]`
        : options.address.hostname
    }:${port}`;
  const accepting = acceptConnections(listener, {
    address,
    limit: options.limit,
    remoteOf: (conn) =>
      conn.remoteAddr.transport === "tcp"
        ? `${conn.remoteAddr.hostname}:${conn.remoteAddr.port}`
        : "unix",
    refuse: (conn, reason) =>
      refuseConn(conn, { status: 503, code: "too_many_connections", message: reason }),
    serve: (conn, slot) => {
      const socket = connSocket(conn);
      track(socket, slot);
      server.emit("connection", socket);
    },
    onRefused: options.onRefused,
  });

  return {
    address,
    port,
    get connections() {
      return sockets.size;
    },
    close: async () => {
      await accepting.stop();
      for (const socket of sockets) socket.destroy();
      for (const timer of handshakes.values()) clearTimeout(timer);
      if ("path" in options.address) await Deno.remove(options.address.path).catch(() => {});
    },
  };
}

/**
 * Writes a whole refusal on a connection no HTTP machinery serves, then closes it: at
 * once if the write does not finish within a second, so refused connections give their
 * descriptors back even when the peer never reads.
 */
function refuseConn(conn: Deno.Conn, refusal: Refusal): void {
  const timer = setTimeout(() => close(), 1000);
  const close = () => {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* already closed */ }
  };
  conn.write(new TextEncoder().encode(rawRefusal(refusal))).then(close, close);
}

function rawRefusal(refusal: Refusal): string {
  const body = bodyOf(refusal);
  const reason = STATUS_TEXT[refusal.status] ?? "Refused";
  return `HTTP/1.1 ${refusal.status} ${reason}\r\nconnection: close\r\n` +
    `content-type: application/json\r\ncontent-length: ${
      new TextEncoder().encode(body).length
    }\r\n` +
    (refusal.status === 401 ? "www-authenticate: Bearer\r\n" : "") + "\r\n" + body;
}

function headOf(request: IncomingMessage): RequestHead {
  return {
    method: request.method ?? "GET",
    target: request.url ?? "/",
    header: (name) => {
      const value = request.headers[name.toLowerCase()];
      return Array.isArray(value) ? value.join(", ") : value;
    },
  };
}

function bodyOf(refusal: Refusal): string {
  return `${JSON.stringify({ error: { code: refusal.code, message: refusal.message } })}\n`;
}

function refuseResponse(response: ServerResponse, refusal: Refusal): void {
  const body = bodyOf(refusal);
  response.writeHead(refusal.status, {
    "content-type": "application/json",
    "content-length": String(new TextEncoder().encode(body).length),
    ...(refusal.status === 401 ? { "www-authenticate": "Bearer" } : {}),
  });
  response.end(body);
}

/** Writes a whole HTTP response on a socket no HTTP machinery answers, then closes it. */
function refuseRaw(socket: Duplex, refusal: Refusal): void {
  // Closed as soon as the answer is out (or a second later): refused connections must give
  // their descriptor back at once, or a flood of them would exhaust the descriptors anyway.
  const timer = setTimeout(() => socket.destroy(), 1000);
  socket.once("close", () => clearTimeout(timer));
  if (socket.writable) socket.end(rawRefusal(refusal), () => socket.destroy());
  else socket.destroy();
}

const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  426: "Upgrade Required",
  503: "Service Unavailable",
};

/**
 * A response sent before its request's body was read whole (a 413, a refusal) ends the
 * connection: the rest of the body would otherwise be read as the next request, and a
 * client reusing the connection would write into a socket the server is about to close.
 */
function closeIfBodyUnread(request: IncomingMessage, response: ServerResponse): void {
  const writeHead = response.writeHead;
  response.writeHead = function (this: ServerResponse, ...args: unknown[]) {
    if (!request.complete) response.setHeader("connection", "close");
    return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
  } as typeof response.writeHead;
  response.once("finish", () => {
    if (!request.complete) request.socket.destroySoon?.() ?? request.socket.end();
  });
}
