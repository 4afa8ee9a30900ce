/**
 * The master's per-replica push channel over a real Unix socket, reading a real store
 * and CAS: replay then live, certified heartbeats, barriers, and the queue bound.
 */
import { waitFor } from "../_helpers/wait_for.ts";
import { assert, assertEquals } from "./_assert.ts";
import { Cas } from "../../lib/cas/mod.ts";
import { PathFilter } from "../../lib/filter/mod.ts";
import { NotificationSource } from "../../lib/replication/notification_source.ts";
import { PushChannel } from "../../lib/replication/push_channel.ts";
import { connectUnix, listenUnix, type Transport } from "../../lib/replication/mod.ts";
import { Store } from "../../lib/store/mod.ts";
import type { WireMessage } from "../../lib/wire/mod.ts";

interface Setup {
  store: Store;
  cas: Cas;
  source: NotificationSource;
  server: Transport;
  client: Transport;
  next(): Promise<WireMessage>;
}

async function withChannelSetup(work: (setup: Setup) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "chronicle-channel-" });
  const store = Store.open(`${dir}/db`);
  const cas = await Cas.open(`${dir}/cas`);
  let resolve!: (t: Transport) => void;
  const accepted = new Promise<Transport>((r) => resolve = r);
  const listener = await listenUnix({ path: `${dir}/s.sock`, onTransport: resolve });
  const client = await connectUnix(`${dir}/s.sock`);
  const server = await accepted;
  const iterator = client.messages()[Symbol.asyncIterator]();
  const next = async (): Promise<WireMessage> => {
    const result = await iterator.next();
    if (result.done) throw new Error("connection ended");
    return result.value;
  };
  try {
    await work({
      store,
      cas,
      source: new NotificationSource(cas, new PathFilter(["*.log"])),
      server,
      client,
      next,
    });
  } finally {
    client.close();
    server.close();
    await listener.close();
    store.close();
    await Deno.remove(dir, { recursive: true });
  }
}

async function record(store: Store, cas: Cas, path: string, text: string) {
  const { hash, size } = await cas.putBytes(new TextEncoder().encode(text));
  return store.record([{ path, hash, size, mode: 0o100644, deleted: false }])[0]!;
}

function channelFor(
  setup: Setup,
  options: { heartbeatMs?: number; maxQueueItems?: number; replayPage?: number } = {},
) {
  const { store, source, server } = setup;
  const limit = options.replayPage === undefined ? {} : { limit: options.replayPage };
  return new PushChannel({
    transport: server,
    source: {
      latestSince: (s) => store.latestSince(s, limit),
      sequence: () => store.sequence(),
      frame: (iteration) => source.frame(iteration),
    },
    heartbeatMs: options.heartbeatMs ?? 60_000,
    ...(options.maxQueueItems ? { maxQueueItems: options.maxQueueItems } : {}),
  });
}

Deno.test("PushChannel replays the latest version of each path, then forwards live", async () => {
  await withChannelSetup(async (setup) => {
    const { store, cas, source, next } = setup;
    await record(store, cas, "a.txt", "a1");
    await record(store, cas, "b.txt", "b1");
    await record(store, cas, "a.txt", "a2"); // supersedes a1
    const channel = channelFor(setup);
    const running = channel.run();
    assertEquals(channel.mode, "idle");
    channel.startReplay(0);
    const replayed = [await next(), await next()];
    assertEquals(
      replayed.map((m) => m.type === "Notification" ? [m.filepath, Number(m.sequence)] : m.type),
      [["b.txt", 2], ["a.txt", 3]],
    );
    const first = replayed[1]!;
    assert(first.type === "Notification");
    assertEquals(new TextDecoder().decode(first.inline_content!), "a2");
    // Live: a new iteration is offered and forwarded; a filtered one only advances the position.
    await waitForMode(channel, "live");
    const live = await record(store, cas, "c.txt", "c1");
    const filtered = await record(store, cas, "debug.log", "noise");
    for (const iteration of [live, filtered]) {
      channel.offer({ sequence: iteration.sequence, frame: await source.frame(iteration) });
    }
    // Going live, the channel tells the replica at once that it is caught up.
    assertEquals(await next(), { type: "Heartbeat", agent_sequence: 3n, agent_iteration: 3n });
    const forwarded = await next();
    assert(forwarded.type === "Notification" && forwarded.filepath === "c.txt");
    // A barrier is answered once everything up to the master's sequence was sent: it certifies.
    channel.barrier(0);
    const confirmation = await next();
    assertEquals(confirmation, {
      type: "BarrierConfirmation",
      satisfied: true,
      current_sequence: BigInt(filtered.sequence),
    });
    channel.close();
    await running;
  });
});

Deno.test("PushChannel heartbeats carry the sequence sent through", async () => {
  await withChannelSetup(async (setup) => {
    const { store, cas, next } = setup;
    await record(store, cas, "a.txt", "a");
    await record(store, cas, "skip.log", "filtered, still counted");
    const channel = channelFor(setup, { heartbeatMs: 20 });
    const running = channel.run();
    channel.startReplay(0);
    const notification = await next();
    assert(notification.type === "Notification" && notification.filepath === "a.txt");
    let heartbeat = await next();
    while (heartbeat.type === "Heartbeat" && heartbeat.agent_sequence < 2n) {
      heartbeat = await next();
    }
    assertEquals(heartbeat, { type: "Heartbeat", agent_sequence: 2n, agent_iteration: 2n });
    channel.close();
    await running;
  });
});

Deno.test("PushChannel drops an overflowing queue and repairs it by replay", async () => {
  await withChannelSetup(async (setup) => {
    const { store, cas, source, next } = setup;
    const channel = channelFor(setup, { maxQueueItems: 3 });
    channel.startReplay(0); // empty store: goes live at the first step
    const running = channel.run();
    await waitForMode(channel, "live");
    // More than the bound arrives before the sender can take any.
    const iterations = [];
    for (let i = 0; i < 6; i++) iterations.push(await record(store, cas, `f${i}`, `v${i}`));
    const items = [];
    for (const it of iterations) {
      items.push({ sequence: it.sequence, frame: await source.frame(it) });
    }
    for (const item of items) channel.offer(item); // all at once, before the sender runs
    assertEquals(channel.overflows, 1);
    const got = new Set<string>();
    while (got.size < 6) {
      const message = await next();
      if (message.type === "Notification") got.add(message.filepath);
    }
    assertEquals(channel.queued, 0);
    channel.close();
    await running;
  });
});

Deno.test("PushChannel replays a store read in pages, each after the last, then goes live", async () => {
  await withChannelSetup(async (setup) => {
    const { store, cas, next } = setup;
    for (let i = 0; i < 7; i++) await record(store, cas, `p${i}.txt`, `v${i}`);
    await record(store, cas, "p0.txt", "v0 again"); // p0 now comes last
    const channel = channelFor(setup, { replayPage: 3 });
    const running = channel.run();
    channel.startReplay(0);
    const replayed: string[] = [];
    while (replayed.length < 7) {
      const message = await next();
      if (message.type === "Notification") replayed.push(`${message.filepath}@${message.sequence}`);
    }
    assertEquals(replayed, [
      "p1.txt@2",
      "p2.txt@3",
      "p3.txt@4",
      "p4.txt@5",
      "p5.txt@6",
      "p6.txt@7",
      "p0.txt@8",
    ]);
    await waitForMode(channel, "live");
    channel.close();
    await running;
  });
});

async function waitForMode(channel: PushChannel, mode: string): Promise<void> {
  await waitFor(`the channel to be ${mode}`, () => {
    if (channel.mode !== mode) throw new Error(`the channel is ${channel.mode}`);
    return true;
  }, { intervalMs: 5 });
}
