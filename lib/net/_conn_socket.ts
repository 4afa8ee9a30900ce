import { Duplex } from "node:stream";

/**
 * What `node:http` and `ws` use of a `net.Socket`, on top of a `Deno.Conn` this module
 * accepted itself (see `serveHttp` for why the accept loop is ours).
 */
export interface ConnSocket extends Duplex {
  readonly remoteAddress: string | undefined;
  readonly remotePort: number | undefined;
  /** Emits `timeout` after `ms` without reads or writes (0 disarms), as `net.Socket` does. */
  setTimeout(ms: number, onIdle?: () => void): this;
  setNoDelay(noDelay?: boolean): this;
  setKeepAlive(enable?: boolean): this;
}

/** Bytes read from the connection at once. */
const READ_CHUNK = 64 * 1024;

/**
 * Wraps `conn` as a stream `node:http` serves: reads are pulled only while the reader
 * wants more (back-pressure), writes resolve once the kernel took them, and destroying
 * the stream closes the descriptor at once.
 *
 * @param conn An accepted TCP or Unix connection.
 * @returns The socket; it owns `conn`.
 */
export function connSocket(conn: Deno.Conn): ConnSocket {
  let pulling = false;
  let idleMs = 0;
  let idleTimer: ReturnType<typeof setTimeout> | undefined;
  const touch = () => {
    clearTimeout(idleTimer);
    idleTimer = idleMs > 0 ? setTimeout(() => socket.emit("timeout"), idleMs) : undefined;
  };
  const socket = new Duplex({
    read() {
      if (pulling) return;
      pulling = true;
      void (async () => {
        try {
          for (;;) {
            const buffer = new Uint8Array(READ_CHUNK);
            const n = await conn.read(buffer);
            if (n === null) {
              socket.push(null);
              return;
            }
            touch();
            if (!socket.push(buffer.subarray(0, n))) break;
          }
          pulling = false;
        } catch (error) {
          socket.destroy(error as Error);
        }
      })();
    },
    write(chunk: Uint8Array, _encoding, callback) {
      void (async () => {
        try {
          for (let offset = 0; offset < chunk.length;) {
            offset += await conn.write(chunk.subarray(offset));
          }
          touch();
          callback();
        } catch (error) {
          callback(error as Error);
        }
      })();
    },
    final(callback) {
      conn.closeWrite().then(() => callback(), () => callback());
    },
    destroy(error, callback) {
      clearTimeout(idleTimer);
      try {
        conn.close();
      } catch { /* already closed */ }
      callback(error);
    },
  }) as ConnSocket;
  const remote = conn.remoteAddr.transport === "tcp" ? conn.remoteAddr : undefined;
  Object.defineProperties(socket, {
    remoteAddress: { value: remote?.hostname },
    remotePort: { value: remote?.port },
  });
  socket.setTimeout = (ms: number, callback?: () => void) => {
    idleMs = ms;
    if (callback && ms > 0) socket.once("timeout", callback);
    else if (callback) socket.off("timeout", callback);
    touch();
    return socket;
  };
  socket.setNoDelay = (noDelay = true) => {
    if ("setNoDelay" in conn) (conn as Deno.TcpConn).setNoDelay(noDelay);
    return socket;
  };
  socket.setKeepAlive = (enable = false) => {
    if ("setKeepAlive" in conn) (conn as Deno.TcpConn).setKeepAlive(enable);
    return socket;
  };
  return socket;
}
