import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
// `ws` ships no types, and `@types/ws` drags in `@types/node`, whose overloads change how
// the rest of the project type-checks: the little used here is typed by hand.
import { WebSocketServer as UntypedServer } from "ws";

/** A server-side connection of `ws`, as this project uses it. */
export interface WsConnection {
  /** Ends the connection at once, without a closing handshake. */
  terminate(): void;
  /** `message` (a whole message arrived) or `close`. */
  on(event: "message" | "close", listener: () => void): void;
}

/** The `ws` server in `noServer` mode, as this project uses it. */
export interface WsServer {
  /** Completes an upgrade on a socket an HTTP server handed over. */
  handleUpgrade(
    request: IncomingMessage,
    socket: Duplex,
    head: Uint8Array,
    done: (connection: WsConnection) => void,
  ): void;
  /** The open connections. */
  readonly clients: Set<WsConnection>;
  /** Stops the server. */
  close(): void;
}

/** Options of the `ws` server used here. */
export interface WsServerOptions {
  /** Always true: an HTTP server of ours hands connections over. */
  noServer: true;
  /** Largest message, in bytes. */
  maxPayload: number;
  /** Always false: a compressed message could expand past every budget. */
  perMessageDeflate: false;
}

/**
 * Makes a `ws` server.
 *
 * @param options See {@linkcode WsServerOptions}.
 * @returns The server.
 */
export function wsServer(options: WsServerOptions): WsServer {
  return new (UntypedServer as unknown as new (options: WsServerOptions) => WsServer)(options);
}
