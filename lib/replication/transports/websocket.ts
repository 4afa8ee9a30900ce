import { isLoopback } from "../../config/mod.ts";
import { sameSecret } from "../../http/mod.ts";
import { decodeWsMessage, encodeFrame, type WireMessage } from "../../wire/mod.ts";
import { AsyncQueue } from "./_async_queue.ts";
import {
  type SendOptions,
  type Transport,
  TransportClosedError,
  type TransportHandler,
  type TransportServer,
} from "./transport.ts";

/**
 * Largest payload one WebSocket message can carry here: Deno refuses messages of 64 MiB
 * and more, and each message holds a whole frame (4-byte header included).
 */
export const WEBSOCKET_MAX_PAYLOAD = 64 * 1024 * 1024 - 1 - 4;

/** Above this many unsent bytes a send waits until the socket drains below the low mark. */
const HIGH_WATER = 4 * 1024 * 1024;
const LOW_WATER = 1024 * 1024;
const DRAIN_POLL_MS = 2;

/**
 * A {@linkcode Transport} over a WebSocket: each binary message carries exactly one
 * whole frame, length header included (PROTOCOL.md §1). A text message, or a binary
 * message that is not exactly one frame, ends the message iteration with a `WireError`.
 */
export class WebSocketTransport implements Transport {
  /** @inheritdoc */
  readonly remote: string;
  /** @inheritdoc */
  readonly maxPayload: number = WEBSOCKET_MAX_PAYLOAD;
  /** @inheritdoc */
  readonly closed: Promise<void>;
  readonly #socket: WebSocket;
  readonly #opened: Promise<void>;
  readonly #queue = new AsyncQueue<WireMessage>();
  #isClosed = false;
  #markClosed!: () => void;

  /**
   * @param socket A WebSocket, open or opening.
   * @param remote How to name the peer in logs.
   */
  constructor(socket: WebSocket, remote: string) {
    this.#socket = socket;
    this.remote = remote;
    socket.binaryType = "arraybuffer";
    this.closed = new Promise((resolve) => this.#markClosed = resolve);
    this.#opened = socket.readyState === WebSocket.OPEN
      ? Promise.resolve()
      : new Promise((resolve, reject) => {
        socket.addEventListener("open", () => resolve(), { once: true });
        this.closed.then(() => reject(new TransportClosedError(remote)));
      });
    this.#opened.catch(() => {});
    socket.addEventListener("message", (event) => {
      if (this.#isClosed) return;
      try {
        this.#queue.push(decodeWsMessage(event.data));
      } catch (error) {
        this.#queue.fail(error);
        this.close();
      }
    });
    socket.addEventListener("close", () => this.#finish());
    socket.addEventListener("error", () => this.#finish());
  }

  /**
   * @inheritdoc (Frames wait in the socket's own buffer, which cannot be reordered:
   * `ahead` changes nothing here.)
   */
  async send(message: WireMessage | Uint8Array, _options?: SendOptions): Promise<void> {
    if (this.#isClosed) throw new TransportClosedError(this.remote);
    await this.#opened;
    const frame = message instanceof Uint8Array ? message : encodeFrame(message);
    if (this.#isClosed) throw new TransportClosedError(this.remote);
    this.#socket.send(frame);
    if (this.#socket.bufferedAmount > HIGH_WATER) {
      // WebSocket has no write promise: poll the buffer down to the low-water mark.
      while (this.#socket.bufferedAmount > LOW_WATER) {
        if (this.#isClosed) throw new TransportClosedError(this.remote);
        await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS));
      }
    }
  }

  /** @inheritdoc */
  messages(): AsyncIterable<WireMessage> {
    return this.#queue;
  }

  /** @inheritdoc */
  close(): void {
    if (this.#isClosed) return;
    try {
      this.#socket.close();
    } catch { /* closing an unopened socket may throw; it is closed either way */ }
    this.#finish();
  }

  #finish(): void {
    if (this.#isClosed) return;
    this.#isClosed = true;
    this.#queue.end();
    this.#markClosed();
  }
}

/** Options for {@linkcode listenWebSocket}. */
export interface ListenWebSocketOptions {
  /** Address to bind, e.g. `127.0.0.1` or `0.0.0.0`. */
  hostname: string;
  /** Port to bind; 0 picks a free one (see {@linkcode TransportServer.port}). */
  port: number;
  /**
   * Bearer token every client must present (`Authorization: Bearer …` or `?token=`).
   * @default {undefined} (no token: allowed only on loopback addresses, or with `insecure`)
   */
  token?: string | undefined;
  /** Allow a non-loopback listener without a token. @default {false} */
  insecure?: boolean;
  /** Called with each accepted connection. */
  onTransport: TransportHandler;
  /** Called when a connection is refused, with the reason (for logging). */
  onRefused?: (remote: string, reason: string) => void;
}

/**
 * Listens for replicas over WebSocket (`Deno.serve` + `Deno.upgradeWebSocket`).
 *
 * @returns The listener; its `port` is the bound port.
 * @throws {TypeError} When asked to listen on a non-loopback address without a token
 * and without `insecure` (PROTOCOL.md §7).
 *
 * @example A loopback listener
 * ```ts ignore
 * const server = await listenWebSocket({ hostname: "127.0.0.1", port: 0, onTransport: (t) => t.close() });
 * await server.close();
 * ```
 */
export function listenWebSocket(options: ListenWebSocketOptions): Promise<TransportServer> {
  const { hostname, token, onTransport } = options;
  if (!token && !options.insecure && !isLoopback(hostname)) {
    return Promise.reject(
      new TypeError(
        `Refusing to listen on non-loopback address "${hostname}" without a token (give --token or CHRONICLE_TOKEN, or --insecure)`,
      ),
    );
  }
  const abort = new AbortController();
  const server = Deno.serve(
    { hostname, port: options.port, signal: abort.signal, onListen: () => {} },
    (request, info) => {
      const remote = `ws://${formatAddress(info.remoteAddr)}`;
      if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") {
        return new Response("Expected a WebSocket upgrade\n", { status: 426 });
      }
      if (token !== undefined && token !== "" && !tokenMatches(request, token)) {
        options.onRefused?.(remote, "missing or wrong bearer token");
        return new Response("Missing or wrong bearer token\n", {
          status: 401,
          headers: { "www-authenticate": "Bearer" },
        });
      }
      const { socket, response } = Deno.upgradeWebSocket(request);
      onTransport(new WebSocketTransport(socket, remote));
      return response;
    },
  );
  const port = server.addr.port;
  return Promise.resolve({
    address: `${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`,
    port,
    async close() {
      abort.abort();
      await server.finished.catch(() => {});
    },
  });
}

/** Options for {@linkcode connectWebSocket}. */
export interface ConnectWebSocketOptions {
  /** Bearer token sent as `Authorization: Bearer …`. @default {undefined} */
  token?: string | undefined;
  /** Milliseconds to wait for the handshake. @default {10000} */
  timeoutMs?: number;
}

/**
 * Connects to a master's WebSocket listener.
 *
 * @param url `ws://host:port/` or `wss://…`.
 * @returns The open transport.
 * @throws {Error} When the handshake fails (refused, wrong token, timeout).
 */
export function connectWebSocket(
  url: string,
  options: ConnectWebSocketOptions = {},
): Promise<Transport> {
  const headers: Record<string, string> = {};
  if (options.token) headers["authorization"] = `Bearer ${options.token}`;
  // Deno's WebSocket accepts request headers as a second-argument option.
  const socket = new WebSocket(url, { headers } as unknown as string[]);
  socket.binaryType = "arraybuffer";
  const remote = url;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      socket.close();
      reject(new Error(`WebSocket handshake with "${url}" timed out`));
    }, options.timeoutMs ?? 10_000);
    const onOpen = () => {
      cleanup();
      resolve(new WebSocketTransport(socket, remote));
    };
    const onFail = (event: Event) => {
      cleanup();
      const detail = event instanceof ErrorEvent ? `: ${event.message}` : "";
      reject(new Error(`WebSocket connection to "${url}" failed${detail}${refusalHint(detail)}`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      socket.removeEventListener("open", onOpen);
      socket.removeEventListener("error", onFail);
      socket.removeEventListener("close", onFail);
    };
    socket.addEventListener("open", onOpen);
    socket.addEventListener("error", onFail);
    socket.addEventListener("close", onFail);
  });
}

/** Says what a refused handshake means: "Invalid status code: 401" alone reads as a network fault. */
function refusalHint(detail: string): string {
  const status = /Invalid status code:? (\d{3})/i.exec(detail)?.[1];
  if (status === "401" || status === "403") {
    return ` (the master refused the token: give the master's --token, or CHRONICLE_TOKEN)`;
  }
  if (status === "404") return " (no replication listener at that path: check the URL)";
  return "";
}

function tokenMatches(request: Request, token: string): boolean {
  const header = request.headers.get("authorization") ?? "";
  const bearer = /^Bearer\s+(.+)$/i.exec(header)?.[1]?.trim();
  const given = bearer ?? new URL(request.url).searchParams.get("token") ?? "";
  return sameSecret(given, token);
}

function formatAddress(addr: Deno.Addr): string {
  if (addr.transport === "tcp" || addr.transport === "udp") {
    return addr.hostname.includes(":")
      ? `[${addr.hostname}]:${addr.port}`
      : `${addr.hostname}:${addr.port}`;
  }
  return addr.transport;
}
