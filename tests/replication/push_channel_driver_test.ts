/**
 * The push channel stepped by hand: `step()` instead of its sender loop, a manual clock
 * instead of real timers, over a real Unix socket reading a real store and CAS. Every
 * heartbeat and barrier deadline here happens because the test advanced the clock.
 */
import { ManualClock } from "../_helpers/manual_clock.ts";
import { assert, assertEquals } from "./_assert.ts";
import { Cas } from "../../lib/cas/mod.ts";
import { PathFilter } from "../../lib/filter/mod.ts";
import { NotificationSource } from "../../lib/replication/notification_source.ts";
import { PushChannel } from "../../lib/replication/push_channel.ts";
import { connectUnix, listenUnix, type Transport } from "../../lib/replication/mod.ts";
import { Store } from "../../lib/store/mod.ts";
import type { WireMessage } from "../../lib/wire/mod.ts";

const HEARTBEAT_MS = 60_000;
const BARRIER_MS = 90_000;

interface Driven {
  store: Store;
  clock: ManualClock;
  channel: PushChannel;
  /** Records `path` with `text` in the store and offers it to the channel, as the master does. */
  record(path: string, text: string): Promise<number>;
  /** The next message the replica's end received. */
  next(): Promise<WireMessage>;
  /** Steps the channel until it has nothing to do; how many steps did something. */
  drain(): Promise<number>;
}

async function withDrivenChannel(
  work: (driven: Driven) => Promise<void>,
  window: { windowItems?: number; windowBytes?: number } = {},
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "chronicle-driven-" });
  const store = Store.open(`${dir}/db`);
  const cas = await Cas.open(`${dir}/cas`);
  const source = new NotificationSource(cas, new PathFilter([]));
  let resolve!: (t: Transport) => void;
  const accepted = new Promise<Transport>((r) => resolve = r);
  const listener = await listenUnix({ path: `${dir}/s.sock`, onTransport: resolve });
  const client = await connectUnix(`${dir}/s.sock`);
  const server = await accepted;
  const iterator = client.messages()[Symbol.asyncIterator]();
  const clock = new ManualClock();
  const channel = new PushChannel({
    transport: server,
    source: {
      latestSince: (s) => store.latestSince(s),
      sequence: () => store.sequence(),
      frame: (iteration) => source.frame(iteration),
    },
    heartbeatMs: HEARTBEAT_MS,
    barrierTimeoutMs: BARRIER_MS,
    clock,
    ...window,
  });
  try {
    await work({
      store,
      clock,
      channel,
      record: async (path, text) => {
        const { hash, size } = await cas.putBytes(new TextEncoder().encode(text));
        const iteration = store.record([{ path, hash, size, mode: 0o100644, deleted: false }])[0]!;
        channel.offer({ sequence: iteration.sequence, frame: await source.frame(iteration) });
        return iteration.sequence;
      },
      next: async () => {
        const result = await iterator.next();
        if (result.done) throw new Error("connection ended");
        return result.value;
      },
      drain: async () => {
        let steps = 0;
        while (await channel.step()) steps++;
        return steps;
      },
    });
  } finally {
    channel.close();
    client.close();
    server.close();
    await listener.close();
    store.close();
    await Deno.remove(dir, { recursive: true });
  }
}

function heartbeat(sequence: number): WireMessage {
  const at = BigInt(sequence);
  return { type: "Heartbeat", agent_sequence: at, agent_iteration: at };
}

function confirmation(satisfied: boolean, current: number): WireMessage {
  return { type: "BarrierConfirmation", satisfied, current_sequence: BigInt(current) };
}

Deno.test("PushChannel.step() replays, goes live and heartbeats only when the clock says", async () => {
  await withDrivenChannel(async ({ clock, channel, record, next, drain }) => {
    await record("a.txt", "a1");
    await record("b.txt", "b1");
    // Idle: nothing is sent and no timer runs before the replica says where it is.
    assertEquals(await channel.step(), false);
    assertEquals(clock.pending(), []);
    channel.startReplay(0);
    assertEquals(clock.pending(), [HEARTBEAT_MS]);
    assertEquals(channel.mode, "replay");
    assertEquals(await channel.step(), true); // the whole replay
    const replayed = [await next(), await next()];
    assertEquals(replayed.map((m) => m.type === "Notification" ? m.filepath : m.type), [
      "a.txt",
      "b.txt",
    ]);
    assertEquals(await channel.step(), true); // nothing left: live
    assertEquals(channel.mode, "live");
    assertEquals(await channel.step(), true); // going live tells the replica it is caught up
    assertEquals(await next(), heartbeat(2));
    assertEquals(await channel.step(), false);

    // Live: an offered iteration is forwarded at the next step.
    const third = await record("c.txt", "c1");
    assertEquals(channel.queued, 1);
    assertEquals(await drain(), 1);
    const live = await next();
    assert(live.type === "Notification" && live.filepath === "c.txt");

    // The heartbeat timer: nothing due a millisecond early, one heartbeat once it fires.
    assertEquals(clock.advance(HEARTBEAT_MS - 1), 0);
    assertEquals(await channel.step(), false);
    assertEquals(clock.advance(1), 1);
    assertEquals(await drain(), 1);
    assertEquals(await next(), heartbeat(third));
    // Re-armed for the next period; a span of three periods fires three heartbeats, sent as one.
    assertEquals(clock.pending(), [HEARTBEAT_MS]);
    assertEquals(clock.advance(3 * HEARTBEAT_MS), 3);
    assertEquals(await drain(), 1);
    assertEquals(await next(), heartbeat(third));
  });
});

Deno.test("PushChannel.step() answers barriers by the clock's time", async (t) => {
  await withDrivenChannel(async ({ store, clock, channel, record, next, drain }) => {
    await record("a.txt", "a1");

    await t.step("a barrier while idle is answered at once, unsatisfied", async () => {
      channel.barrier(1);
      assertEquals(clock.pending(), []); // no deadline to wait for
      assertEquals(await drain(), 1);
      assertEquals(await next(), confirmation(false, 1));
    });

    channel.startReplay(0);
    await drain();
    assertEquals((await next()).type, "Notification");
    assertEquals(await next(), heartbeat(1));

    await t.step("a reached barrier is confirmed at the next step, certifying", async () => {
      channel.barrier(1);
      assertEquals(clock.pending(), [HEARTBEAT_MS, BARRIER_MS + 1]);
      assertEquals(await drain(), 1);
      assertEquals(await next(), confirmation(true, 1));
      assertEquals(clock.pending(), [HEARTBEAT_MS]); // answered: its deadline timer is gone
    });

    await t.step("a barrier ahead of the master waits until its deadline", async () => {
      channel.barrier(50);
      assertEquals(clock.pending(), [HEARTBEAT_MS, BARRIER_MS + 1]);
      assertEquals(await channel.step(), false); // pending: not reached, not expired
      clock.advance(HEARTBEAT_MS); // the heartbeat fires; the barrier still waits
      assertEquals(await drain(), 1);
      assertEquals(await next(), heartbeat(1));
      assertEquals(clock.advance(BARRIER_MS - HEARTBEAT_MS - 1), 0);
      assertEquals(await channel.step(), false);
      clock.advance(2); // past the deadline: its timer fires
      assertEquals(await drain(), 1);
      assertEquals(await next(), confirmation(false, store.sequence()));
      // Only the heartbeat is left armed: no barrier is pending.
      assertEquals(clock.pending(), [HEARTBEAT_MS - (BARRIER_MS + 1) % HEARTBEAT_MS]);
    });

    await t.step("a barrier is confirmed once the master reaches it and it was sent", async () => {
      const requested = store.sequence() + 1;
      channel.barrier(requested);
      assertEquals(await channel.step(), false);
      await record("b.txt", "b1");
      assertEquals(await channel.step(), true); // the notification first
      const sent = await next();
      assert(sent.type === "Notification" && sent.filepath === "b.txt");
      assertEquals(await channel.step(), true); // then the confirmation certifying it
      assertEquals(await next(), confirmation(true, requested));
      assertEquals(await channel.step(), false);
      assertEquals(clock.pending().length, 1); // the heartbeat only
    });

    await t.step(
      "a deadline passing during a replay: refused after it, no timer re-armed",
      async () => {
        channel.startReplay(0);
        channel.barrier(99);
        clock.advance(BARRIER_MS + 1); // its timer fires (and the heartbeat's)
        assertEquals(clock.pending().length, 1); // the heartbeat's next period only
        assertEquals(await channel.step(), true); // the heartbeat due
        assertEquals(await channel.step(), true); // the replay, the barrier still unanswered
        assertEquals(clock.pending().length, 1); // the due barrier armed nothing while waiting
        await drain();
        const seen: WireMessage[] = [];
        while (seen.at(-1)?.type !== "BarrierConfirmation") seen.push(await next());
        assertEquals(seen.filter((m) => m.type === "Notification").length, 2); // a.txt, b.txt
        assertEquals(seen.at(-1), confirmation(false, store.sequence()));
        assertEquals(await channel.step(), false);
      },
    );
  });
});

Deno.test("PushChannel: close() disarms every timer; step() refuses while run() loops", async () => {
  await withDrivenChannel(async ({ clock, channel, drain, next }) => {
    channel.startReplay(0);
    await drain();
    assertEquals(await next(), heartbeat(0));
    const running = channel.run();
    let refused: unknown;
    await channel.step().catch((error) => refused = error);
    assert(refused instanceof Error && /running/.test(refused.message));
    channel.barrier(10);
    assertEquals(clock.pending().length, 2); // the heartbeat and the barrier's deadline
    channel.close();
    await running;
    assertEquals(clock.pending(), []);
    assertEquals(await channel.step(), false);
  });
});

Deno.test("PushChannel.step() holds notifications at a closed window until an ack", async () => {
  // One byte of window: each notification fills it, whatever its size.
  await withDrivenChannel(async ({ clock, channel, record, next, drain }) => {
    const first = await record("a.txt", "a1");
    const second = await record("b.txt", "b1");
    channel.startReplay(0);
    assertEquals(await drain(), 1); // the replay's first notification, then the window is full
    const sent = await next();
    assert(sent.type === "Notification" && sent.filepath === "a.txt");
    assertEquals(channel.unacked, 1);
    assertEquals(channel.mode, "replay");
    clock.advance(HEARTBEAT_MS); // a heartbeat still goes, certifying only what was handed
    assertEquals(await drain(), 1);
    assertEquals(await next(), heartbeat(first));
    channel.acked(first - 1); // acknowledges nothing sent
    assertEquals(await channel.step(), false);
    channel.acked(first);
    assertEquals(channel.unacked, 0);
    assertEquals(await channel.step(), true); // the rest of the page
    const rest = await next();
    assert(rest.type === "Notification" && rest.filepath === "b.txt");
    assertEquals(await channel.step(), false); // the replay cannot finish: the window is full
    channel.acked(second);
    await drain(); // nothing left: live, and the heartbeat saying it is caught up
    assertEquals(channel.mode, "live");
    assertEquals(await next(), heartbeat(second));

    // Live: offered ones wait in the queue, one handed per ack.
    const third = await record("c.txt", "c1");
    const fourth = await record("d.txt", "d1");
    assertEquals(await drain(), 1);
    assertEquals(channel.queued, 1);
    channel.barrier(fourth); // not handed everything: not certified while it waits
    assertEquals(await channel.step(), false);
    channel.acked(third);
    assertEquals(await drain(), 2); // the last one, then the barrier certifying it
    const messages = [await next(), await next(), await next()];
    assertEquals(messages.map((m) => m.type === "Notification" ? m.filepath : m.type), [
      "c.txt",
      "d.txt",
      "BarrierConfirmation",
    ]);
    assertEquals(messages[2], confirmation(true, fourth));
  }, { windowBytes: 1 });
});
