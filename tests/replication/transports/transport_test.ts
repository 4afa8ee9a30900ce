import { accessPolicy } from "../../../lib/net/mod.ts";
import { assert, assertEquals, assertRejects } from "../_assert.ts";
import {
  connectUnix,
  connectWebSocket,
  listenUnix,
  listenWebSocket,
  type Transport,
  TransportClosedError,
  type TransportServer,
} from "../../../lib/replication/transports/mod.ts";
import { encodeFrame, WireError, type WireMessage } from "../../../lib/wire/mod.ts";

/** One transport implementation under test: a listener, a client, and a raw byte sender. */
interface Harness {
  server: TransportServer;
  accepted: Promise<Transport>;
  connect(): Promise<Transport>;
  /** Opens a raw connection and sends bytes exactly as given (bypassing the transport). */
  sendRaw(bytes: Uint8Array | string): Promise<void>;
  cleanup(): Promise<void>;
}

type Factory = () => Promise<Harness>;

function acceptor(): { onTransport: (t: Transport) => void; accepted: Promise<Transport> } {
  let resolve!: (t: Transport) => void;
  const accepted = new Promise<Transport>((r) => resolve = r);
  return { onTransport: (t) => resolve(t), accepted };
}

const unixFactory: Factory = async () => {
  const dir = await Deno.makeTempDir({ prefix: "chronicle-transport-" });
  const path = `${dir}/s.sock`;
  const { onTransport, accepted } = acceptor();
  const server = await listenUnix({ path, onTransport });
  return {
    server,
    accepted,
    connect: () => connectUnix(path),
    async sendRaw(bytes) {
      const conn = await Deno.connect({ transport: "unix", path });
      const data = typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes;
      let offset = 0;
      while (offset < data.length) offset += await conn.write(data.subarray(offset));
      // Leave the connection open: the server must act on the bytes alone.
    },
    async cleanup() {
      await server.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
};

const webSocketFactory: Factory = async () => {
  const { onTransport, accepted } = acceptor();
  const server = await listenWebSocket({ hostname: "127.0.0.1", port: 0, onTransport });
  const url = `ws://127.0.0.1:${server.port}/`;
  return {
    server,
    accepted,
    connect: () => connectWebSocket(url),
    async sendRaw(bytes) {
      const socket = new WebSocket(url);
      await new Promise((resolve, reject) => {
        socket.onopen = resolve;
        socket.onerror = reject;
      });
      socket.send(bytes);
    },
    async cleanup() {
      await server.close();
    },
  };
};

const factories: [string, Factory][] = [["unix socket", unixFactory], [
  "websocket",
  webSocketFactory,
]];

async function collect(transport: Transport, count: number): Promise<WireMessage[]> {
  const out: WireMessage[] = [];
  if (count === 0) return out;
  for await (const message of transport.messages()) {
    out.push(message);
    if (out.length === count) break;
  }
  return out;
}

const sample: WireMessage[] = [
  { type: "CatchupRequest", sandbox_id: "песочница-🧪", since_sequence: 18446744073709551615n },
  {
    type: "Notification",
    sequence: 7n,
    filepath: "src/main.ts",
    content_hash: "ab".repeat(32),
    size: 3n,
    permissions: 0o100644n,
    is_deletion: false,
    inline_content: new Uint8Array([1, 2, 3]),
  },
  { type: "Heartbeat", agent_sequence: 7n, agent_iteration: 7n },
  { type: "Ack", up_to_sequence: 7n },
];

for (const [name, factory] of factories) {
  Deno.test(`${name} transport carries messages both ways in order`, async () => {
    const h = await factory();
    try {
      const client = await h.connect();
      const server = await h.accepted;
      for (const m of sample) await client.send(m);
      assertEquals(await collect(server, sample.length), sample);
      // Many small frames sent without waiting arrive complete and in order.
      const acks = Array.from({ length: 2000 }, (_, i): WireMessage => ({
        type: "Ack",
        up_to_sequence: BigInt(i),
      }));
      await Promise.all(acks.map((m) => server.send(m)));
      assertEquals(await collect(client, acks.length), acks);
      // An already-encoded frame is sent as is.
      await server.send(encodeFrame({ type: "BarrierRequest", sequence: 5n }));
      assertEquals(await collect(client, 1), [{ type: "BarrierRequest", sequence: 5n }]);
      client.close();
      // The reader sees the end of the stream, and the server side closes too.
      assertEquals(await collect(server, Infinity), []);
      await server.closed;
    } finally {
      await h.cleanup();
    }
  });

  Deno.test(`${name} transport carries a 5 MiB frame intact`, async () => {
    const h = await factory();
    try {
      const client = await h.connect();
      const server = await h.accepted;
      const content = new Uint8Array(5 * 1024 * 1024);
      for (let i = 0; i < content.length; i += 4096) content[i] = (i / 4096) & 0xff;
      const message: WireMessage = {
        type: "ContentFetchResponse",
        content_hash: "cd".repeat(32),
        content,
        size: BigInt(content.length),
        chunk_manifest: null,
      };
      const sent = server.send(message);
      const [got] = await collect(client, 1);
      await sent;
      assertEquals(got, message);
      client.close();
    } finally {
      await h.cleanup();
    }
  });

  Deno.test(`${name} transport ends when the peer closes and refuses later sends`, async () => {
    const h = await factory();
    try {
      const client = await h.connect();
      const server = await h.accepted;
      client.close();
      assertEquals(await collect(server, Infinity), []);
      await server.closed;
      await assertRejects(
        () => server.send({ type: "Ack", up_to_sequence: 1n }),
        TransportClosedError,
      );
      await assertRejects(
        () => client.send({ type: "Ack", up_to_sequence: 1n }),
        TransportClosedError,
      );
    } finally {
      await h.cleanup();
    }
  });

  Deno.test(`${name} transport rejects garbage with a WireError and closes`, async () => {
    const h = await factory();
    try {
      // A well-framed payload whose variant index (200) does not exist.
      await h.sendRaw(new Uint8Array([4, 0, 0, 0, 200, 0, 0, 0]));
      const server = await h.accepted;
      const error = await assertRejects(() => collect(server, 1), WireError);
      assertEquals(error.code, "unknown_variant");
      await server.closed;
    } finally {
      await h.cleanup();
    }
  });

  Deno.test(`${name} transport refuses an oversized length header`, async () => {
    const h = await factory();
    try {
      // 200 MiB announced; no payload follows. The refusal must not wait for it.
      await h.sendRaw(new Uint8Array([0, 0, 0, 0x0c]));
      const server = await h.accepted;
      const error = await assertRejects(() => collect(server, 1), WireError);
      assert(["oversized_frame", "truncated_payload"].includes(error.code), error.code);
      await server.closed;
    } finally {
      await h.cleanup();
    }
  });
}

Deno.test("unix socket transport sends a frame `ahead` before the frames still queued, never inside one", async () => {
  const h = await unixFactory();
  const client = await h.connect();
  const server = await h.accepted;
  try {
    const bulk = Array.from({ length: 50 }, (_, i): WireMessage => ({
      type: "ContentFetchResponse",
      content_hash: String(i % 10).repeat(64),
      content: new Uint8Array(100_000).fill(i),
      size: 100_000n,
      chunk_manifest: null,
    }));
    const urgent: WireMessage[] = [
      { type: "Ack", up_to_sequence: 41n },
      { type: "Ack", up_to_sequence: 42n },
    ];
    // All in one tick: the first frame is being written, the other 49 wait in the queue.
    const sent = bulk.map((m) => server.send(m));
    for (const m of urgent) sent.push(server.send(m, { ahead: true }));
    const received = await collect(client, bulk.length + 2); // read while they are written
    await Promise.all(sent);
    // Compared by a short label each: a diff of 5 MB of messages would take minutes.
    const label = (m: WireMessage) =>
      m.type === "ContentFetchResponse" ? `data ${m.content[0]} ${m.content.length}` : m.type;
    assertEquals(received.map(label), [
      label(bulk[0]!),
      "Ack",
      "Ack",
      ...bulk.slice(1).map(label),
    ], "right after the frame being written, the rest in order");
    assertEquals(received.slice(1, 3), urgent, "ahead of the rest, in their own order");
  } finally {
    client.close();
    server.close();
    await h.cleanup();
  }
});

Deno.test("unix socket transport creates the socket with mode 0600 and replaces a stale one", async () => {
  const dir = await Deno.makeTempDir({ prefix: "chronicle-transport-" });
  try {
    const path = `${dir}/s.sock`;
    const first = await listenUnix({ path, onTransport: (t) => t.close() });
    assertEquals((await Deno.stat(path)).mode! & 0o777, 0o600);
    // A second listener on a live socket is refused.
    await assertRejects(
      () => listenUnix({ path, onTransport: (t) => t.close() }),
      Deno.errors.AddrInUse,
    );
    await first.close();
    // A socket file left by a dead process (simulated by a child that exits) is replaced.
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "eval",
        `Deno.listen({ transport: "unix", path: ${JSON.stringify(path)} }); Deno.exit(0);`,
      ],
    });
    await child.output();
    const second = await listenUnix({ path, onTransport: (t) => t.close() });
    await second.close();
    // A regular file is never removed in its place.
    await Deno.writeTextFile(path, "not a socket");
    await assertRejects(
      () => listenUnix({ path, onTransport: (t) => t.close() }),
      Deno.errors.AlreadyExists,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("websocket transport checks the bearer token", async (t) => {
  const accepted: Transport[] = [];
  const refused: string[] = [];
  const server = await listenWebSocket({
    hostname: "127.0.0.1",
    port: 0,
    access: accessPolicy({ token: "s3cret", tokenForAll: true, tokenInQuery: true }),
    onTransport: (transport) => accepted.push(transport),
    onRefused: (_remote, reason) => refused.push(reason),
  });
  const url = `ws://127.0.0.1:${server.port}/`;
  try {
    await t.step("the right token in the header is accepted", async () => {
      const client = await connectWebSocket(url, { token: "s3cret" });
      await client.send({ type: "Ack", up_to_sequence: 1n });
      client.close();
    });
    await t.step("the right token as ?token= is accepted", async () => {
      const client = await connectWebSocket(`${url}?token=s3cret`);
      client.close();
    });
    await t.step("a wrong or missing token is refused", async () => {
      await assertRejects(() => connectWebSocket(url, { token: "wrong" }));
      await assertRejects(() => connectWebSocket(url));
      assertEquals(refused.length, 2);
    });
    assertEquals(accepted.length, 2);
    for (const transport of accepted) transport.close();
  } finally {
    await server.close();
  }
});

Deno.test("websocket transport closes on a text message", async () => {
  const h = await webSocketFactory();
  try {
    await h.sendRaw("hello");
    const server = await h.accepted;
    const error = await assertRejects(() => collect(server, 1), WireError);
    assertEquals(error.code, "text_message");
  } finally {
    await h.cleanup();
  }
});
