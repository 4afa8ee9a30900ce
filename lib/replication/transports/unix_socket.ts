import {
  acceptConnections,
  type BudgetHolder,
  type ByteBudget,
  type ListenerLimit,
  ownListenerLimit,
} from "../../net/mod.ts";
import {
  encodeFrame,
  FrameReader,
  MAX_FRAME_PAYLOAD,
  WireError,
  type WireMessage,
} from "../../wire/mod.ts";
import {
  type SendOptions,
  type Transport,
  TransportClosedError,
  type TransportHandler,
  type TransportServer,
} from "./transport.ts";

/** Frames queued while a write is in flight are joined into writes of about this size. */
const COALESCE_BYTES = 256 * 1024;

/**
 * A {@linkcode Transport} over a connected Unix domain socket: frames are written back
 * to back on the stream (several small frames coalesced into one write) and read with
 * the wire codec's streaming frame reader, which refuses an oversized length header
 * before buffering its payload.
 */
export class UnixSocketTransport implements Transport {
  /** How the peer is named in logs. */
  readonly remote: string;
  /** The largest frame payload this transport carries. */
  readonly maxPayload: number = MAX_FRAME_PAYLOAD;
  /** Settles once the connection has closed, whichever side closed it. */
  readonly closed: Promise<void>;
  readonly #conn: Deno.Conn;
  #pending: Uint8Array[] = [];
  /** How many of the first frames of `#pending` were sent `ahead`. */
  #aheadQueued = 0;
  #waiters: { resolve: () => void; reject: (error: unknown) => void }[] = [];
  #writing = false;
  readonly #reader = new FrameReader();
  #pieces: AsyncGenerator<Uint8Array> | null = null;
  readonly #budget: ByteBudget | undefined;
  readonly #holder: BudgetHolder;
  #evicted: string | null = null;
  #isClosed = false;
  #markClosed!: () => void;

  /**
   * Wraps a connected Unix socket in the frame protocol.
   *
   * @param conn A connected Unix socket.
   * @param remote How to name the peer in logs.
   * @param options `budget`: where the bytes of frames not yet complete are counted (a
   * connection over it is closed).
   */
  constructor(conn: Deno.Conn, remote: string, options: UnixTransportOptions = {}) {
    this.#conn = conn;
    this.remote = remote;
    this.#budget = options.budget;
    this.#holder = {
      evict: (reason) => {
        this.#evicted ??= reason;
        this.close();
      },
    };
    this.closed = new Promise((resolve) => this.#markClosed = resolve);
  }

  /** Sends one message (or an encoded frame); rejects once the connection is closed. */
  send(message: WireMessage | Uint8Array, options: SendOptions = {}): Promise<void> {
    if (this.#isClosed) return Promise.reject(new TransportClosedError(this.remote));
    const frame = message instanceof Uint8Array ? message : encodeFrame(message);
    const done = new Promise<void>((resolve, reject) => {
      // Queued frames and their waiters stay in step: both lists get it at the same place.
      if (options.ahead) {
        // After earlier `ahead` frames still queued, before everything else.
        this.#pending.splice(this.#aheadQueued, 0, frame);
        this.#waiters.splice(this.#aheadQueued, 0, { resolve, reject });
        this.#aheadQueued++;
      } else {
        this.#pending.push(frame);
        this.#waiters.push({ resolve, reject });
      }
    });
    if (!this.#writing) this.#flush();
    return done;
  }

  /** The messages received, in order; ends when the connection closes. */
  messages(): AsyncIterable<WireMessage> {
    // No `return()`: leaving a `for await` early must not close the connection.
    const next = () => this.#next();
    return { [Symbol.asyncIterator]: () => ({ next }) };
  }

  async #next(): Promise<IteratorResult<WireMessage>> {
    this.#pieces ??= readPieces(this.#conn);
    try {
      for (;;) {
        const message = this.#reader.nextMessage();
        if (message !== null) {
          this.#budget?.set(this.#holder, this.#reader.bufferedBytes);
          return { done: false, value: message };
        }
        const piece = await this.#pieces.next();
        if (this.#evicted !== null) throw new Error(this.#evicted);
        if (piece.done) {
          this.#reader.end();
          this.close();
          return { done: true, value: undefined };
        }
        this.#reader.push(piece.value);
        this.#budget?.set(this.#holder, this.#reader.bufferedBytes);
        if (this.#evicted !== null) throw new Error(this.#evicted);
      }
    } catch (error) {
      const ours = this.#isClosed && !(error instanceof WireError) && this.#evicted === null;
      this.close();
      // A read interrupted by our own close() is an ordinary end, not a fault.
      if (ours) return { done: true, value: undefined };
      // Evicted while a read was pending: the eviction, not the cancelled read, is why.
      if (this.#evicted !== null && !(error instanceof WireError)) throw new Error(this.#evicted);
      throw error;
    }
  }

  /** Closes the connection; safe to call more than once. */
  close(): void {
    if (this.#isClosed) return;
    this.#isClosed = true;
    try {
      this.#conn.close();
    } catch { /* already closed by the runtime */ }
    this.#failWaiters(new TransportClosedError(this.remote));
    this.#budget?.set(this.#holder, 0);
    this.#markClosed();
  }

  async #flush(): Promise<void> {
    this.#writing = true;
    try {
      while (this.#pending.length > 0 && !this.#isClosed) {
        // Take frames up to COALESCE_BYTES (at least one) and write them as one buffer.
        let count = 0;
        let bytes = 0;
        while (count < this.#pending.length && (count === 0 || bytes < COALESCE_BYTES)) {
          bytes += this.#pending[count]!.length;
          count++;
        }
        const frames = this.#pending.splice(0, count);
        const waiters = this.#waiters.splice(0, count);
        this.#aheadQueued = Math.max(0, this.#aheadQueued - count);
        try {
          await this.#writeAll(frames.length === 1 ? frames[0]! : join(frames, bytes));
        } catch (error) {
          for (const waiter of waiters) waiter.reject(error);
          throw error;
        }
        for (const waiter of waiters) waiter.resolve();
      }
    } catch (error) {
      this.close();
      this.#failWaiters(error);
    } finally {
      this.#writing = false;
    }
  }

  async #writeAll(bytes: Uint8Array): Promise<void> {
    let offset = 0;
    while (offset < bytes.length) offset += await this.#conn.write(bytes.subarray(offset));
  }

  #failWaiters(error: unknown): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    this.#pending = [];
    this.#aheadQueued = 0;
    for (const waiter of waiters) waiter.reject(error);
  }
}

/** Bytes asked for by each read of the connection. */
const READ_BYTES = 64 * 1024;

/**
 * The connection's bytes as they arrive, each piece in a buffer of its own (the frame
 * reader keeps pieces until their frames are complete). Reads the connection directly:
 * `conn.readable` costs a web stream's machinery for every piece.
 */
async function* readPieces(conn: Deno.Conn): AsyncGenerator<Uint8Array> {
  for (;;) {
    const buffer = new Uint8Array(READ_BYTES);
    const count = await conn.read(buffer);
    if (count === null) return;
    // A small piece is copied: a view would keep the whole 64 KiB buffer alive, and a peer
    // trickling single bytes would make each of its bytes cost that much memory.
    yield count < READ_BYTES / 2 ? buffer.slice(0, count) : buffer.subarray(0, count);
  }
}

function join(frames: Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let offset = 0;
  for (const frame of frames) {
    out.set(frame, offset);
    offset += frame.length;
  }
  return out;
}

/** Options for {@linkcode UnixSocketTransport}. */
export interface UnixTransportOptions {
  /** Budget of bytes of frames not yet complete. @default {undefined} (the frame limit only) */
  budget?: ByteBudget | undefined;
}

/** Options for {@linkcode listenUnix}. */
export interface ListenUnixOptions {
  /** The socket file to create. A stale socket left by a dead process is replaced. */
  path: string;
  /** Called with each accepted connection. */
  onTransport: TransportHandler;
  /** This listener's share of the process's connections. @default {its own limits} */
  limit?: ListenerLimit | undefined;
  /** Budget of bytes of frames not yet complete, shared by every connection. @default {undefined} */
  budget?: ByteBudget | undefined;
  /** Called when a connection is refused or accepting fails, with the reason (for logging). */
  onRefused?: (remote: string, reason: string) => void;
}

/**
 * Listens on a Unix socket created with mode 0600 (PROTOCOL.md §7).
 *
 * @returns The listener.
 * @throws {Deno.errors.AddrInUse} When another live process listens on `path`.
 *
 * @example Listening and connecting
 * ```ts ignore
 * const server = await listenUnix({ path: "/tmp/c.sock", onTransport: (t) => t.close() });
 * const client = await connectUnix("/tmp/c.sock");
 * await client.closed;
 * await server.close();
 * ```
 */
export async function listenUnix(options: ListenUnixOptions): Promise<TransportServer> {
  const { path, onTransport } = options;
  await removeStaleSocket(path);
  const listener = Deno.listen({ transport: "unix", path });
  // RACE: until this chmod the socket has the umask's mode. Connecting needs write access,
  // which a usual umask (022) denies to others, and the default data folder is 0700. Not
  // narrowing the umask instead keeps the binaries free of --allow-sys, and avoids changing
  // a process-wide setting while other files are being created.
  await Deno.chmod(path, 0o600);
  const limit = options.limit ?? ownListenerLimit();
  let connections = 0;
  const accepting = acceptConnections(listener, {
    address: `unix:${path}`,
    limit,
    remoteOf: () => `unix:${path}#${++connections}`,
    refuse: (conn) => conn.close(), // the wire has no refusal message: the close is the answer
    serve: (conn, slot, remote) => {
      const transport = new UnixSocketTransport(conn, remote, { budget: options.budget });
      transport.closed.then(() => slot.release());
      onTransport(transport);
    },
    onRefused: options.onRefused,
  });
  return {
    address: path,
    async close() {
      await accepting.stop();
      await Deno.remove(path).catch(() => {});
    },
  };
}

/**
 * Connects to a master's Unix socket.
 *
 * @param path The socket file.
 * @returns The connected transport.
 * @throws {Deno.errors.NotFound | Deno.errors.ConnectionRefused} When nothing listens there.
 */
export async function connectUnix(path: string): Promise<Transport> {
  const conn = await Deno.connect({ transport: "unix", path });
  return new UnixSocketTransport(conn, `unix:${path}`);
}

async function removeStaleSocket(path: string): Promise<void> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.lstat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return;
    throw error;
  }
  if (!info.isSocket) {
    throw new Deno.errors.AlreadyExists(`"${path}" exists and is not a socket`);
  }
  try {
    const probe = await Deno.connect({ transport: "unix", path });
    probe.close();
    throw new Deno.errors.AddrInUse(`Another process is listening on "${path}"`);
  } catch (error) {
    if (error instanceof Deno.errors.AddrInUse) throw error;
    await Deno.remove(path).catch(() => {});
  }
}
