import {
  type AccessCheck,
  type BudgetHolder,
  ByteBudget,
  type ListenerLimit,
  ownListenerLimit,
  serveHttp,
} from "../../net/mod.ts";
import { decodeWsMessage, encodeFrame, type WireMessage } from "../../wire/mod.ts";
import { AsyncQueue } from "./_async_queue.ts";
import { wsServer } from "./_ws_server.ts";
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
  /** How the peer is named in logs. */
  readonly remote: string;
  /** The largest frame payload this transport carries. */
  readonly maxPayload: number = WEBSOCKET_MAX_PAYLOAD;
  /** Settles once the connection has closed, whichever side closed it. */
  readonly closed: Promise<void>;
  readonly #socket: WebSocket;
  readonly #opened: Promise<void>;
  readonly #queue = new AsyncQueue<WireMessage>();
  #isClosed = false;
  #markClosed!: () => void;

  /**
   * Wraps a WebSocket in the frame protocol (one frame per binary message).
   *
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
   * Sends one message (or an encoded frame); rejects once the connection is closed.
   * Frames wait in the socket's own buffer, which cannot be reordered: `ahead` changes
   * nothing here.
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

  /** The messages received, in order; ends when the connection closes. */
  messages(): AsyncIterable<WireMessage> {
    return this.#queue;
  }

  /** Closes the connection; safe to call more than once. */
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
   * Who may connect (token, loopback `Host`), decided by the caller from its
   * configuration; checked before the upgrade. @default {undefined} (everyone)
   */
  access?: AccessCheck | undefined;
  /** This listener's share of the process's connections. @default {its own limits} */
  limit?: ListenerLimit | undefined;
  /** Milliseconds a connection has to complete its upgrade request. @default {10000} */
  handshakeTimeoutMs?: number | undefined;
  /**
   * Budget of bytes of messages not yet complete, shared with other listeners.
   * @default {a budget of 64 MiB per connection and 128 MiB in all}
   */
  partialBudget?: ByteBudget | undefined;
  /** Called with each accepted connection. */
  onTransport: TransportHandler;
  /** Called when a connection is refused, with the reason (for logging). */
  onRefused?: (remote: string, reason: string) => void;
}

/**
 * Listens for replicas over WebSocket (`node:http` and `ws`, so that every connection is
 * counted, timed and budgeted from its first byte: see `serveHttp`). Whether a client may
 * connect (its token, the `Host` it names) is the caller's `access` rule.
 *
 * @returns The listener; its `port` is the bound port.
 *
 * @example A loopback listener
 * ```ts ignore
 * const server = await listenWebSocket({ hostname: "127.0.0.1", port: 0, onTransport: (t) => t.close() });
 * await server.close();
 * ```
 */
export async function listenWebSocket(options: ListenWebSocketOptions): Promise<TransportServer> {
  const limit = options.limit ?? ownListenerLimit();
  const budget = options.partialBudget ??
    new ByteBudget({ perHolder: WEBSOCKET_MAX_PAYLOAD + 4096, total: 128 * 1024 * 1024 });
  // Deflate stays off: a compressed message could expand past every budget.
  const wss = wsServer({
    noServer: true,
    maxPayload: WEBSOCKET_MAX_PAYLOAD + 4,
    perMessageDeflate: false,
  });
  const server = await serveHttp({
    address: { hostname: options.hostname, port: options.port },
    access: options.access,
    limit,
    handshakeTimeoutMs: options.handshakeTimeoutMs,
    onRefused: options.onRefused,
    onUpgrade: (request, socket, head) => {
      const remote = `ws://${request.socket.remoteAddress}:${request.socket.remotePort}`;
      wss.handleUpgrade(request, socket, head, (ws) => {
        // Bytes received since the last whole message count against the budget.
        let partial = 0;
        const holder: BudgetHolder = {
          evict: (reason) => {
            options.onRefused?.(remote, reason);
            ws.terminate();
          },
        };
        socket.on("data", (chunk: Uint8Array) => {
          partial += chunk.length;
          budget.set(holder, partial);
        });
        ws.on("message", () => {
          partial = 0;
          budget.set(holder, 0);
        });
        ws.on("close", () => budget.set(holder, 0));
        options.onTransport(new WebSocketTransport(ws as unknown as WebSocket, remote));
      });
    },
  });
  return {
    address: server.address,
    ...(server.port === undefined ? {} : { port: server.port }),
    async close() {
      await server.close();
      for (const client of wss.clients) client.terminate();
      wss.close();
    },
  };
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
