/**
 * Issue #16, item 8: through a plain relay that blocks on writes, a two-way flood of large
 * files must converge. The relay is one loop for both directions, as simple relays are: it
 * takes a chunk from whichever side has one and writes it whole to the other side before it
 * reads anything more, from either side. So while the master cannot send to the replica,
 * nothing reaches the master either: a master that stopped reading while its sends wait
 * (acks, heartbeats, write-backs) would wait forever. Master and replica are separate
 * processes.
 *
 * Such a deadlock does not last: the replica's watchdog drops a silent master (here after
 * 15 s) and reconnects, and the flood then converges anyway, only slower. So the test asserts the
 * flood converged on the one connection it started with: before the master's reading was
 * decoupled from its sending (fda69bd), this relay saw the replica reconnect several
 * times ("master silent for more than … ms").
 */
import { assertEquals } from "../_helpers/assert.ts";
import { put } from "../_helpers/temp_dir.ts";
import {
  pseudoRandomBytes,
  startMaster,
  startReplica,
  stopPeers,
  waitForSameTrees,
  withDirs,
} from "./_harness.ts";

/** Files written on each side at once. */
const FILES_EACH_SIDE = 150;
const FILE_BYTES = 1024 * 1024;

Deno.test("a two-way flood of 1 MiB files through a relay that blocks on writes converges", async () => {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    await put(m, "seed.txt", "before the flood");
    const sock = `${base}/m.sock`;
    const master = await startMaster(m, sock);
    const relay = BlockingRelay.start(`${base}/relay.sock`, sock);
    // A master silent for 15 s (5 heartbeats) is dropped: a deadlock lasts that long, a
    // busy machine's pause does not.
    const replica = await startReplica(r, `${base}/relay.sock`, { args: ["--heartbeat", "3000"] });
    try {
      await waitForSameTrees([m, r], { peers: [master, replica] });
      // Both sides write at once: the master pushes its files while the replica writes
      // its own back, each side's sends queued behind the relay's blocked writes.
      await Promise.all([
        ...Array.from(
          { length: FILES_EACH_SIDE },
          (_, i) => put(m, `from-master/${i}.bin`, pseudoRandomBytes(FILE_BYTES, i + 1)),
        ),
        ...Array.from(
          { length: FILES_EACH_SIDE },
          (_, i) => put(r, `from-replica/${i}.bin`, pseudoRandomBytes(FILE_BYTES, 1000 + i)),
        ),
      ]);
      await waitForSameTrees([m, r], { peers: [master, replica], timeoutMs: 240_000 });
      assertEquals(
        relay.connections,
        1,
        `the replica reconnected: a side stopped reading while its sends waited\n${replica.logs()}`,
      );
    } finally {
      try {
        await stopPeers(replica, master);
      } finally {
        relay.close();
      }
    }
  });
});

/** A Unix-socket relay with one loop for both directions, blocking on each write. */
class BlockingRelay {
  readonly #listener: Deno.Listener;
  readonly #open = new Set<Deno.Conn>();
  /** Connections relayed so far: a replica that had to reconnect makes more than one. */
  connections = 0;

  private constructor(listener: Deno.Listener, upstream: string) {
    this.#listener = listener;
    this.#accept(upstream);
  }

  static start(listen: string, upstream: string): BlockingRelay {
    return new BlockingRelay(Deno.listen({ transport: "unix", path: listen }), upstream);
  }

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

  async #accept(upstream: string): Promise<void> {
    try {
      for await (const client of this.#listener) {
        this.connections++;
        const server = await Deno.connect({ transport: "unix", path: upstream });
        this.#open.add(client).add(server);
        void this.#relay(client, server);
      }
    } catch { /* listener closed */ }
  }

  async #relay(a: Deno.Conn, b: Deno.Conn): Promise<void> {
    const read = (from: Deno.Conn, to: Deno.Conn) => {
      const buffer = new Uint8Array(64 * 1024);
      return from.read(buffer).then((n) => ({
        from,
        to,
        chunk: n === null ? null : buffer.subarray(0, n),
      }));
    };
    const pending = new Map([[a, read(a, b)], [b, read(b, a)]]);
    try {
      for (;;) {
        const { from, to, chunk } = await Promise.race(pending.values());
        if (chunk === null) break;
        // Written whole before anything else is read, from either side.
        for (let written = 0; written < chunk.length;) {
          written += await to.write(chunk.subarray(written));
        }
        pending.set(from, read(from, to));
      }
    } catch { /* a side closed */ }
    for (const conn of [a, b]) {
      this.#open.delete(conn);
      try {
        conn.close();
      } catch { /* closed */ }
    }
  }
}
