/** serveHttp on real sockets: the connection cap, the handshake timeout, Unix sockets. */
import { accessPolicy, ConnectionLimits, serveHttp } from "../../lib/net/mod.ts";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";

const encoder = new TextEncoder();

/** Reads until the peer closes (or `deadlineMs` passes: then `null`), returning the text. */
async function readToEnd(conn: Deno.Conn, deadlineMs = 20_000): Promise<string | null> {
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    conn.close();
  }, deadlineMs);
  let text = "";
  const buffer = new Uint8Array(4096);
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const n = await conn.read(buffer).catch(() => null);
      if (n === null) break;
      text += decoder.decode(buffer.subarray(0, n), { stream: true });
    }
  } finally {
    clearTimeout(timer);
  }
  return expired ? null : text;
}

async function get(conn: Deno.Conn, host = "127.0.0.1"): Promise<string | null> {
  await conn.write(
    encoder.encode(`GET /ok HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`),
  );
  return await readToEnd(conn);
}

Deno.test("serveHttp refuses past its cap with a 503 and serves again once a slot frees", async () => {
  const refused: string[] = [];
  const server = await serveHttp({
    address: { hostname: "127.0.0.1", port: 0 },
    fetch: () => new Response("ok"),
    limit: new ConnectionLimits({ maxTotal: 10 }).listener(2),
    onRefused: (_remote, reason) => refused.push(reason),
  });
  const connect = () => Deno.connect({ hostname: "127.0.0.1", port: server.port! });
  const idle = [await connect(), await connect()];
  try {
    await waitFor("both idle connections to be counted", () => server.connections === 2);
    const third = await readToEnd(await connect());
    assert(third?.startsWith("HTTP/1.1 503"), `third connection: ${third}`);
    assert(third!.includes("too_many_connections"), third!);
    assertEquals(refused, ["this listener already holds its maximum of 2 connections"]);
    idle.pop()!.close();
    await waitFor("the slot to free", () => server.connections === 1);
    const answer = await get(await connect());
    assert(answer?.startsWith("HTTP/1.1 200"), `after a slot freed: ${answer}`);
  } finally {
    for (const conn of idle) conn.close();
    await server.close();
  }
});

Deno.test("serveHttp closes a connection that sends no request head within the handshake timeout", async () => {
  const refused: string[] = [];
  const server = await serveHttp({
    address: { hostname: "127.0.0.1", port: 0 },
    fetch: () => new Response("ok"),
    limit: new ConnectionLimits({ maxTotal: 10 }).listener(10),
    handshakeTimeoutMs: 200,
    onRefused: (_remote, reason) => refused.push(reason),
  });
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.port! });
    await conn.write(encoder.encode("GET /ok HTTP/1.1\r\nHost: 127")); // and never more
    assertEquals(await readToEnd(conn), "");
    assertEquals(refused, ["no request within 200 ms"]);
    await waitFor("the slot to free", () => server.connections === 0);
  } finally {
    await server.close();
  }
});

Deno.test("serveHttp applies the access rule and serves on a Unix socket", () =>
  withTempDir(async (dir) => {
    const path = `${dir}/http.sock`;
    const server = await serveHttp({
      address: { path },
      fetch: () => new Response("ok"),
      access: accessPolicy({ loopback: true }),
      limit: new ConnectionLimits({ maxTotal: 10 }).listener(10),
    });
    try {
      const served = await get(await Deno.connect({ transport: "unix", path }), "localhost");
      assert(served?.startsWith("HTTP/1.1 200") && served.endsWith("ok"), `${served}`);
      const foreign = await get(await Deno.connect({ transport: "unix", path }), "evil.example");
      assert(foreign?.startsWith("HTTP/1.1 403"), `${foreign}`);
    } finally {
      await server.close();
    }
  }));

Deno.test("serveHttp closes the connection after answering before the body was read (a 413)", async () => {
  const server = await serveHttp({
    address: { hostname: "127.0.0.1", port: 0 },
    // Refuses at once, reading none of the body, as a size limit does.
    fetch: (request) =>
      request.method === "POST"
        ? Response.json({ error: "too large" }, { status: 413 })
        : new Response("ok"),
    limit: new ConnectionLimits({ maxTotal: 10 }).listener(10),
  });
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.port! });
  try {
    await conn.write(encoder.encode(
      "POST /big HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10000000\r\n\r\n" +
        "x".repeat(1000),
    ));
    // Kept alive, the connection would wait for the rest of the body; closed, it ends.
    const answer = await readToEnd(conn);
    assert(answer?.startsWith("HTTP/1.1 413"), `answer: ${answer}`);
    assert(/\r\nconnection: close\r\n/i.test(answer!), answer!);
  } finally {
    await server.close();
  }
  // A request read whole keeps its connection for the next one.
  const kept = await serveHttp({
    address: { hostname: "127.0.0.1", port: 0 },
    fetch: () => new Response("ok"),
    limit: new ConnectionLimits({ maxTotal: 10 }).listener(10),
  });
  const again = await Deno.connect({ hostname: "127.0.0.1", port: kept.port! });
  try {
    await again.write(encoder.encode("GET /a HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
    // Read until the whole head came (one read may return only part of it).
    const buffer = new Uint8Array(4096);
    let head = "";
    while (!head.includes("\r\n\r\n")) {
      const n = await again.read(buffer);
      if (n === null) break;
      head += new TextDecoder().decode(buffer.subarray(0, n));
    }
    assert(head.startsWith("HTTP/1.1 200"), head);
    assert(!/\r\nconnection: close\r\n/i.test(head), head);
  } finally {
    again.close();
    await kept.close();
  }
});
