import type { WireMessage } from "../../wire/mod.ts";

/**
 * One connection carrying replication messages, whatever moves the bytes (a Unix
 * socket or a WebSocket). The replication core knows only this interface.
 */
export interface Transport {
  /** Who is at the other end, for logs, e.g. `unix:/run/chronicle.sock` or `ws://10.0.0.2:51234`. */
  readonly remote: string;
  /** Largest frame payload this transport can carry, in bytes. */
  readonly maxPayload: number;
  /**
   * Sends one message, or one frame already encoded with `encodeFrame` (so a frame
   * shared by many replicas is encoded once). Resolves once the bytes are handed to the
   * operating system or the socket's buffer is below its high-water mark, which is the
   * back-pressure the caller waits on.
   *
   * @param options `ahead`: sent before frames still queued on this side, for an answer
   * the peer is waiting on (a content fetch) behind a long stream of notifications.
   * @throws {TransportClosedError} When the connection is closed.
   */
  send(message: WireMessage | Uint8Array, options?: SendOptions): Promise<void>;
  /**
   * The received messages in order. Call once. The iteration ends when the peer closes
   * the connection, and throws a `WireError` for malformed or oversized input.
   */
  messages(): AsyncIterable<WireMessage>;
  /** Closes the connection; pending and later sends fail. Safe to call twice. */
  close(): void;
  /** Settles once the connection is closed, by either side. */
  readonly closed: Promise<void>;
}

/** Options of {@linkcode Transport.send}. */
export interface SendOptions {
  /**
   * Send before frames still queued here, after earlier `ahead` ones (never inside a
   * write already started). A transport that cannot reorder sends it in turn.
   */
  ahead?: boolean;
}

/** A listener that hands each accepted connection to a callback. */
export interface TransportServer {
  /** Where it listens, e.g. `/run/chronicle.sock` or `127.0.0.1:3002`. */
  readonly address: string;
  /** For a WebSocket listener: the port really bound (useful with port 0). */
  readonly port?: number;
  /** Stops accepting and closes the listener (accepted transports stay open). */
  close(): Promise<void>;
}

/** Called with each accepted connection. */
export type TransportHandler = (transport: Transport) => void;

/** Opens a new connection to the master; a replica calls it again after every disconnect. */
export type Connector = () => Promise<Transport>;

/** A send on a connection that is already closed. */
export class TransportClosedError extends Error {
  /**
   * Makes the error naming the connection.
   *
   * @param remote The connection's remote description.
   */
  constructor(remote: string) {
    super(`Connection to "${remote}" is closed`);
    this.name = "TransportClosedError";
  }
}
