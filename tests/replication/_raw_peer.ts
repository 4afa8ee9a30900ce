/**
 * A replica connection speaking raw wire messages over a real Unix socket, keeping
 * everything it receives: for tests that play the replica's side by hand.
 *
 * @module
 */
import { connectUnix, type Transport } from "../../lib/replication/mod.ts";
import type { WireMessage } from "../../lib/wire/mod.ts";

/** A raw replica connection, with what it received. */
export interface RawPeer {
  transport: Transport;
  received: WireMessage[];
  /** Resolves once the connection ended. */
  ended: Promise<void>;
  /** Whether it ended. */
  closed(): boolean;
}

/** Connects to the master's socket and starts keeping what arrives. */
export async function connectRawPeer(socket: string): Promise<RawPeer> {
  const transport = await connectUnix(socket);
  const received: WireMessage[] = [];
  let closed = false;
  const ended = (async () => {
    try {
      for await (const message of transport.messages()) received.push(message);
    } catch {
      // a connection closed under a read ends the same way
    }
    closed = true;
  })();
  return { transport, received, ended, closed: () => closed };
}
