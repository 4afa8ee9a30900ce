/**
 * A Unix-socket proxy for fault tests and benchmarks: forwards bytes both ways between
 * clients and an upstream socket, counts them, and (while `cutting`) cuts each connection
 * after a seeded pseudo-random number of bytes, in the middle of whatever frame is
 * passing (a header, a payload, a chunk); or holds back what the upstream sends for a
 * while ({@linkcode CuttingProxy.stall}), as a stalled server or a slow link does.
 *
 * @module
 */

/** Options for {@linkcode CuttingProxy.start}. */
export interface CuttingProxyOptions {
  /** Where the proxy listens. */
  listen: string;
  /** The real server's socket. */
  upstream: string;
  /** Seed of the cut positions, so a failing run can be repeated. */
  seed: number;
  /** Largest number of bytes a connection carries before it is cut. */
  maxBytes: number;
}

/** A running cutting proxy. */
export class CuttingProxy {
  readonly #listener: Deno.Listener;
  readonly #options: CuttingProxyOptions;
  readonly #open = new Set<Deno.Conn>();
  #state: number;
  /** How many connections were cut so far. */
  cuts = 0;
  /** Bytes forwarded, both directions together. */
  bytes = 0;
  /** While false, connections are forwarded without cuts. */
  cutting = true;
  /** Connections accepted so far: a client that had to reconnect makes more than one. */
  connections = 0;
  /** Settles when the current stall ends; `null` while nothing is held back. */
  #stalled: Promise<void> | null = null;

  private constructor(listener: Deno.Listener, options: CuttingProxyOptions) {
    this.#listener = listener;
    this.#options = options;
    this.#state = options.seed >>> 0 || 1;
    this.#accept();
  }

  /** Starts listening. */
  static start(options: CuttingProxyOptions): CuttingProxy {
    const listener = Deno.listen({ transport: "unix", path: options.listen });
    return new CuttingProxy(listener, options);
  }

  /** Holds back everything the upstream sends for `ms`, then lets it through; resolves then. */
  async stall(ms: number): Promise<void> {
    let end = () => {};
    this.#stalled = new Promise<void>((resolve) => end = resolve);
    await new Promise((resolve) => setTimeout(resolve, ms));
    this.#stalled = null;
    end();
  }

  /** Stops listening and closes every connection. */
  close(): void {
    try {
      this.#listener.close();
    } catch { /* closed */ }
    for (const conn of this.#open) {
      try {
        conn.close();
      } catch { /* closed */ }
    }
  }

  #random(): number {
    let x = this.#state;
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    this.#state = x;
    return x / 0x1_0000_0000;
  }

  async #accept(): Promise<void> {
    try {
      for await (const client of this.#listener) {
        let upstream: Deno.Conn;
        try {
          upstream = await Deno.connect({ transport: "unix", path: this.#options.upstream });
        } catch {
          client.close();
          continue;
        }
        this.connections++;
        const budget = { left: 1 + Math.floor(this.#random() * this.#options.maxBytes) };
        const pair = [client, upstream];
        for (const conn of pair) this.#open.add(conn);
        const cut = () => {
          for (const conn of pair) {
            this.#open.delete(conn);
            try {
              conn.close();
            } catch { /* closed */ }
          }
        };
        this.#pump(client, upstream, budget, cut, false);
        this.#pump(upstream, client, budget, cut, true);
      }
    } catch { /* listener closed */ }
  }

  async #pump(
    from: Deno.Conn,
    to: Deno.Conn,
    budget: { left: number },
    cut: () => void,
    fromUpstream: boolean,
  ) {
    const buffer = new Uint8Array(64 * 1024);
    try {
      while (true) {
        const n = await from.read(buffer);
        if (n === null) break;
        if (fromUpstream) await this.#stalled;
        let chunk = buffer.subarray(0, n);
        const cutting = this.cutting && n >= budget.left;
        if (cutting) chunk = chunk.subarray(0, budget.left);
        else if (this.cutting) budget.left -= n;
        let written = 0;
        while (written < chunk.length) written += await to.write(chunk.subarray(written));
        this.bytes += chunk.length;
        if (cutting) {
          this.cuts++;
          break;
        }
      }
    } catch { /* the other side closed */ }
    cut();
  }
}
