/**
 * A `MasterSession` driven by hand: each replica message handed to `receive()`, the push
 * channel advanced by `step()`, no read loop, no sender loop and no real timer, over a
 * real Unix socket, store, CAS and fetch scheduler. What goes up to the master (identity,
 * acknowledgements, write-backs) is recorded by the callbacks the session reports through.
 */
import { assert, assertEquals } from "./_assert.ts";
import { ManualClock } from "../_helpers/manual_clock.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";
import { Cas } from "../../lib/cas/mod.ts";
import { PathFilter } from "../../lib/filter/mod.ts";
import { FetchScheduler } from "../../lib/replication/fetch_scheduler.ts";
import { MasterSession } from "../../lib/replication/master_session.ts";
import { NotificationSource } from "../../lib/replication/notification_source.ts";
import { answerContentFetch } from "../../lib/replication/content_answer.ts";
import { connectUnix, listenUnix, type Transport } from "../../lib/replication/mod.ts";
import { Store } from "../../lib/store/mod.ts";
import type { WireMessage } from "../../lib/wire/mod.ts";

interface Driven {
  session: MasterSession;
  /** What the session reported up, in order. */
  reported: string[];
  /** The messages the replica's end received so far. */
  received: WireMessage[];
  /** Whether the replica's end saw the connection close. */
  closed(): boolean;
  /** The content hash of the one stored file. */
  hash: string;
}

async function withSession(work: (driven: Driven) => Promise<void>): Promise<void> {
  await withTempDir(async (dir) => {
    const store = Store.open(`${dir}/db`);
    const cas = await Cas.open(`${dir}/cas`);
    const { hash, size } = await cas.putBytes(new TextEncoder().encode("hello"));
    store.record([{ path: "a.txt", hash, size, mode: 0o100644, deleted: false }]);
    const source = new NotificationSource(cas, new PathFilter([]));
    let resolve!: (t: Transport) => void;
    const accepted = new Promise<Transport>((r) => resolve = r);
    const listener = await listenUnix({ path: `${dir}/s.sock`, onTransport: resolve });
    const client = await connectUnix(`${dir}/s.sock`);
    const server = await accepted;
    const received: WireMessage[] = [];
    let closed = false;
    const reading = (async () => {
      try {
        for await (const message of client.messages()) received.push(message);
      } catch {
        // a connection closed under a read ends the same way
      }
      closed = true;
    })();
    const reported: string[] = [];
    const session = new MasterSession({
      transport: server,
      replay: {
        latestSince: (s) => store.latestSince(s),
        sequence: () => store.sequence(),
        frame: (iteration) => source.frame(iteration),
      },
      fetches: new FetchScheduler({
        answer: (wanted, maxPayload) => answerContentFetch(cas, wanted, maxPayload),
      }),
      position: () => ({ current: store.sequence(), floor: 0 }),
      identified: (_session, sandboxId) => reported.push(`identified ${sandboxId}`),
      recordAck: (sandboxId, sequence) => reported.push(`ack ${sandboxId} ${sequence}`),
      applyWriteBack: (sandboxId, entries) => {
        reported.push(`writeBack ${sandboxId} ${entries.length}`);
        return Promise.resolve({ accepted: [], rejected: [], disconnect: null });
      },
      heartbeatMs: 60_000,
      clock: new ManualClock(),
    });
    try {
      await work({ session, reported, received, closed: () => closed, hash });
    } finally {
      session.close("test over");
      client.close();
      await reading;
      await listener.close();
      store.close();
    }
  });
}

async function drain(session: MasterSession): Promise<void> {
  while (await session.channel.step()) {
    // each step sends one unit and waits for it to be written
  }
}

Deno.test("MasterSession.receive() runs one message through the session, without its loops", async (t) => {
  await t.step("an Ack before the catch-up closes the connection", async () => {
    await withSession(async ({ session, reported, closed }) => {
      assertEquals(await session.receive({ type: "Ack", up_to_sequence: 1n }), true);
      await waitFor("the replica's end closed", () => closed());
      assertEquals(reported, []);
    });
  });

  await t.step("catch-up, replay, ack, barrier, fetch and write-back, in turn", async () => {
    await withSession(async ({ session, reported, received, hash }) => {
      const catchup: WireMessage = {
        type: "CatchupRequest",
        sandbox_id: "sb-1",
        since_sequence: 0n,
      };
      assertEquals(await session.receive(catchup), false);
      assertEquals(reported, ["identified sb-1"]);
      assertEquals(session.sandboxId, "sb-1");
      assertEquals(session.channel.mode, "replay");
      await drain(session);
      await waitFor("the replay and its heartbeat", () => received.length === 2);
      assertEquals(received.map((m) => m.type), ["Notification", "Heartbeat"]);

      assertEquals(await session.receive({ type: "Ack", up_to_sequence: 1n }), false);
      assertEquals(await session.receive({ type: "Ack", up_to_sequence: 1n }), false);
      assertEquals(session.acked, 1);
      assertEquals(reported, ["identified sb-1", "ack sb-1 1"]); // a repeated ack is not stored

      assertEquals(await session.receive({ type: "BarrierRequest", sequence: 1n }), false);
      await drain(session);
      await waitFor("the barrier confirmed", () => received.length === 3);
      assertEquals(received[2], {
        type: "BarrierConfirmation",
        satisfied: true,
        current_sequence: 1n,
      });

      assertEquals(
        await session.receive({ type: "ContentFetchRequest", content_hash: hash }),
        false,
      );
      const answer = await waitFor(
        "the fetch answered",
        () => received.find((m) => m.type === "ContentFetchResponse"),
      );
      assert(answer.type === "ContentFetchResponse");
      assertEquals(new TextDecoder().decode(answer.content), "hello");

      const writeBack: WireMessage = { type: "WriteBack", sandbox_id: "sb-1", entries: [] };
      assertEquals(await session.receive(writeBack), false);
      await waitFor(
        "the write-back answered",
        () => received.some((m) => m.type === "WriteBackResult"),
      );
      assertEquals(reported.at(-1), "writeBack sb-1 0");

      const other: WireMessage = { type: "WriteBack", sandbox_id: "sb-2", entries: [] };
      assertEquals(await session.receive(other), true, "a changed sandbox id closes");
    });
  });
});
