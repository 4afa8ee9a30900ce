import type { ConnectionSlot, ListenerLimit } from "./connection_limits.ts";

/** Pause after a failed accept (descriptors short), so the loop does not spin. */
const ACCEPT_RETRY_MS = 50;

/** Options for {@linkcode acceptConnections}. */
export interface AcceptConnectionsOptions {
  /** Names the listener in the reason of a failed accept. */
  address: string;
  /** The listener's share of the process's connections. */
  limit: ListenerLimit;
  /** How an accepted connection is named to `onRefused` and `serve`. */
  remoteOf: (conn: Deno.Conn) => string;
  /** Answers a connection beyond the limits and closes it. */
  refuse: (conn: Deno.Conn, reason: string) => void;
  /** Takes an admitted connection; `slot` must be released when the connection ends. */
  serve: (conn: Deno.Conn, slot: ConnectionSlot, remote: string) => void;
  /** Called when a connection is refused or accepting fails, with the reason (for logging). */
  onRefused?: ((remote: string, reason: string) => void) | undefined;
}

/** A running accept loop. */
export interface AcceptLoop {
  /** Closes the listener and resolves once the loop ended. */
  stop(): Promise<void>;
}

/**
 * Accepts connections on `listener` until stopped: each is admitted against `limit` or
 * refused. A failed accept (out of descriptors, a connection reset before it was taken)
 * waits a moment and goes on, so a flood leaves the listener serving once it passed.
 *
 * @param listener A bound listener; the loop owns it.
 * @param options See {@linkcode AcceptConnectionsOptions}.
 * @returns The loop.
 */
export function acceptConnections(
  listener: Deno.Listener,
  options: AcceptConnectionsOptions,
): AcceptLoop {
  let closing = false;
  const accepting = (async () => {
    while (!closing) {
      let conn: Deno.Conn;
      try {
        conn = await listener.accept();
      } catch (error) {
        if (closing || error instanceof Deno.errors.BadResource) return;
        options.onRefused?.(options.address, `accept failed: ${(error as Error).message}`);
        await new Promise((resolve) => setTimeout(resolve, ACCEPT_RETRY_MS));
        continue;
      }
      const remote = options.remoteOf(conn);
      const slot = options.limit.admit();
      if (typeof slot === "string") {
        options.onRefused?.(remote, slot);
        options.refuse(conn, slot);
        continue;
      }
      options.serve(conn, slot, remote);
    }
  })();
  return {
    async stop() {
      closing = true;
      try {
        listener.close();
      } catch { /* already closed */ }
      await accepting.catch(() => {});
    },
  };
}
