/**
 * Hostile networks against a real master process (issue #16, items 5–7): connection
 * floods under a lowered open-file limit, half frames against the partial-frame budget,
 * and a fetch flood beside a healthy replica. Each case runs the daemon as a child process
 * with the binaries' permissions; the attacker writes raw bytes on real sockets.
 *
 * @module
 */
import { freePort } from "../_helpers/processes.ts";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import {
  type Peer,
  pseudoRandomBytes,
  replicaStatus,
  startReplica,
  stopPeers,
  waitForLive,
  waitForSameTrees,
  withDirs,
} from "./_harness.ts";
import { type DaemonChild, HostileConnection, rawHttp, startDaemon } from "./_hostile_client.ts";

const MiB = 1024 * 1024;

function healthRequest(port: number): string {
  return `GET /health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`;
}

/** Waits until the master closed every one of `conns`, or fails naming how many remain. */
async function closedByMaster(conns: HostileConnection[], what: string): Promise<void> {
  let open = conns.length;
  for (const conn of conns) conn.closedByPeer().then(() => open--);
  await waitFor(`the master to close ${what} (${conns.length})`, () => open === 0, {
    timeoutMs: 90_000,
    intervalMs: 100,
  }).catch((error) => {
    throw new Error(`${error.message}; ${open} still open`);
  });
}

/** Log lines of `daemon` that contain `text`. */
function logLines(daemon: DaemonChild, text: string): string[] {
  return daemon.logs().split("\n").filter((line) => line.includes(text));
}

async function connectedReplica(r: string, sock: string, m: string): Promise<Peer> {
  const replica = await startReplica(r, sock, { args: ["--sandbox-id", "healthy"] });
  await waitForLive(replica);
  await waitForSameTrees([m, r], { timeoutMs: 60_000 });
  return replica;
}

Deno.test("1,000 idle connections under ulimit -n 256 and a cap of 100: excess refused, idle ones closed, a healthy replica and /health still served", async () => {
  await withDirs(["m", "r"], async ({ m, r }) => {
    await Deno.writeTextFile(`${m}/a.txt`, "before the flood");
    const http = freePort();
    const ws = freePort();
    const daemon = await startDaemon(m, [
      "--replication",
      "--ws-listen",
      `127.0.0.1:${ws}`,
      "--http",
      `127.0.0.1:${http}`,
      "--token",
      "t0k3n",
      "--handshake-timeout-ms",
      "1000",
      // Explicit: the binaries cannot read their open-file limit (Deno wants --allow-all
      // for /proc/self/limits), so their default assumes 1,024.
      "--max-connections",
      "100",
      "--log-format",
      "json",
    ], { openFiles: 256 });
    const sock = `${m}/.chronicle/chronicle.sock`;
    const hostile: HostileConnection[] = [];
    let replica: Peer | undefined;
    try {
      replica = await connectedReplica(r, sock, m);
      const connectionsBefore = (await replicaStatus(replica)).connections;
      let kernelRefused = 0;
      for (let i = 0; i < 1000; i++) {
        try {
          hostile.push(
            i % 3 === 0
              ? await HostileConnection.unix(sock)
              : await HostileConnection.tcp(i % 3 === 1 ? http : ws),
          );
        } catch {
          kernelRefused++; // a connection the kernel refused (backlog full) is refused too
        }
      }
      // Half-written requests, never finished.
      const encoder = new TextEncoder();
      for (const conn of hostile.filter((_, i) => i % 3 === 1).slice(0, 50)) {
        await conn.write(encoder.encode("GET /files HTTP/1.1\r\nHost: 127"));
      }
      await waitFor("a connection refused at the cap", () => logLines(daemon, "maximum of").length);
      // The replica admitted before the flood keeps following, on the same connection.
      await Deno.writeTextFile(`${m}/during.txt`, "written during the flood");
      await waitForSameTrees([m, r], { timeoutMs: 60_000 });
      // Every hostile connection ends: refused at the cap, or closed at the handshake timeout.
      await closedByMaster(hostile, "every hostile connection");
      const health = await waitFor("/health to answer after the flood", async () => {
        const answer = await rawHttp(http, healthRequest(http));
        return answer.status === 200 ? answer : undefined;
      }, { timeoutMs: 60_000 });
      assert(health.text.includes('"status":"ok"'), health.text);
      assertEquals((await replicaStatus(replica)).connections, connectionsBefore);
      assert(daemon.alive(), `the daemon died:\n${daemon.logs()}`);
      console.log(
        `flood: ${logLines(daemon, "maximum of").length} refused at the cap, ${
          logLines(daemon, "within 1000 ms").length
        } closed at the handshake timeout, ${kernelRefused} refused by the kernel, ${
          logLines(daemon, "accept failed").length
        } failed accepts retried`,
      );
    } finally {
      for (const conn of hostile) conn.close();
      if (replica) await stopPeers(replica);
      await daemon.stop();
    }
  });
});

Deno.test("half frames: 24 connections offering 768 MiB are each dropped by the 8 MiB partial-frame budget", async () => {
  await withDirs(["m"], async ({ m }) => {
    const http = freePort();
    const budget = 8 * MiB;
    const daemon = await startDaemon(m, [
      "--replication",
      "--http",
      `127.0.0.1:${http}`,
      "--max-partial-frame-bytes",
      String(budget),
      // Long enough that the budget, not the handshake timeout, is what drops them.
      "--handshake-timeout-ms",
      "600000",
      "--log-format",
      "json",
    ]);
    const sock = `${m}/.chronicle/chronicle.sock`;
    const before = daemon.rss() ?? 0;
    let peak = before;
    const sample = () => peak = Math.max(peak, daemon.rss() ?? 0);
    const conns: HostileConnection[] = [];
    try {
      // Each: a 100 MiB length (the largest allowed), then 32 MiB of it, then silence.
      const writes = await Promise.all(
        Array.from({ length: 24 }, async () => {
          const conn = await HostileConnection.unix(sock);
          conns.push(conn);
          await conn.sendLength(100 * MiB);
          const wrote = await conn.sendFiller(32 * MiB, 256 * 1024);
          sample();
          return wrote;
        }),
      );
      await closedByMaster(conns, "every half-frame connection");
      // Each one was dropped for the budget (the log line is written as it is closed).
      const evicted = () =>
        new Set(
          logLines(daemon, `exceed the budget of '${budget}' bytes`).map((line) =>
            JSON.parse(line).remote
          ),
        );
      await waitFor("24 connections evicted for the partial-frame budget", () => {
        if (evicted().size > 24) throw new Error(daemon.logs());
        return evicted().size === 24;
      }).catch((error) => {
        throw new Error(`${error.message}\n${logLines(daemon, "replica").join("\n")}`);
      });
      sample();
      const health = await rawHttp(http, healthRequest(http));
      assertEquals(health.status, 200);
      assert(daemon.alive(), daemon.logs());
      console.log(
        `half frames: RSS ${(before / MiB).toFixed(0)} MiB before, peak ${
          (peak / MiB).toFixed(0)
        } MiB seen; ${writes.filter((wrote) => !wrote).length} of 24 writers cut mid-write`,
      );
      // 768 MiB were offered; kept within the budget, memory grows by far less.
      assert(peak - before < 256 * MiB, `RSS grew from ${before} to ${peak} bytes`);
    } finally {
      for (const conn of conns) conn.close();
      await daemon.stop();
    }
  });
});

Deno.test("fetch flood: five peers asking 300 times for a 3.9 MiB object are closed; /health and a healthy replica are served throughout", async () => {
  await withDirs(["m", "r"], async ({ m, r }) => {
    await Deno.writeFile(`${m}/big.bin`, pseudoRandomBytes(3_900_000, 16));
    const http = freePort();
    const daemon = await startDaemon(m, [
      "--replication",
      "--http",
      `127.0.0.1:${http}`,
      "--log-format",
      "json",
    ]);
    const sock = `${m}/.chronicle/chronicle.sock`;
    let replica: Peer | undefined;
    try {
      replica = await connectedReplica(r, sock, m);
      const connectionsBefore = (await replicaStatus(replica)).connections;
      const history = await rawHttp(
        http,
        `GET /files/big.bin/history HTTP/1.1\r\nHost: 127.0.0.1:${http}\r\nConnection: close\r\n\r\n`,
      );
      assertEquals(history.status, 200, history.text);
      const { hash } = JSON.parse(history.text.split("\r\n\r\n")[1]!)[0];
      const latencies: number[] = [];
      let flooding = true;
      const probe = (async () => {
        while (flooding) {
          const started = performance.now();
          const { status } = await rawHttp(http, healthRequest(http), 60_000);
          assertEquals(status, 200);
          latencies.push(performance.now() - started);
        }
      })();
      const flooders = await Promise.all(
        Array.from({ length: 5 }, () => HostileConnection.unix(sock)),
      );
      await Promise.all(flooders.map((conn) =>
        conn.sendMessages(
          Array.from({ length: 300 }, () => ({
            type: "ContentFetchRequest" as const,
            content_hash: hash,
          })),
        )
      ));
      // The master closes a peer past 256 outstanding fetches; these never read answers.
      await closedByMaster(flooders, "the flooding peers");
      await waitFor(
        "the master to log why it closed the flooding peers",
        () => logLines(daemon, "more than 256 content fetches outstanding").length >= 5,
      );
      // The healthy replica still follows new writes, on the same connection.
      await Deno.writeTextFile(`${m}/after.txt`, "after the flood");
      await waitForSameTrees([m, r], { timeoutMs: 60_000 });
      flooding = false;
      await probe;
      assert(latencies.length > 0, "/health was never asked");
      assertEquals((await replicaStatus(replica)).connections, connectionsBefore);
      latencies.sort((a, b) => a - b);
      console.log(
        `fetch flood: /health answered ${latencies.length} times, median ${
          latencies[Math.floor(latencies.length / 2)]?.toFixed(1)
        } ms, worst ${latencies.at(-1)?.toFixed(1)} ms`,
      );
    } finally {
      if (replica) await stopPeers(replica);
      await daemon.stop();
    }
  });
});
