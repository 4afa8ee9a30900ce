/** The push channel's pure state machine, tested by a table. */
import { assertEquals } from "./_assert.ts";
import {
  type ChannelAction,
  type ChannelEvent,
  type ChannelState,
  initialChannelState,
  nextBarrierDeadline,
  stepChannel,
  windowOpen,
} from "../../lib/replication/channel_state.ts";

const limits = {
  maxQueueItems: 3,
  maxQueueBytes: 100,
  barrierTimeoutMs: 1000,
  windowItems: 2,
  windowBytes: 50,
};
const idle = initialChannelState(limits);
const replay: ChannelState = { ...idle, mode: "replay", generation: 1, sentThrough: 5 };
const live: ChannelState = { ...replay, mode: "live", sentThrough: 9 };

function confirmation(satisfied: boolean, current: number): ChannelAction {
  return {
    type: "send",
    message: { type: "BarrierConfirmation", satisfied, current_sequence: BigInt(current) },
  };
}

Deno.test("stepChannel() moves a push channel through idle, replay and live", async (t) => {
  const table: {
    description: string;
    input: { state: ChannelState; event: ChannelEvent };
    expected: { state: ChannelState; actions: ChannelAction[] };
  }[] = [
    {
      description: "a catch-up replays after the replica's sequence",
      input: { state: idle, event: { type: "catchup", since: 4 } },
      expected: {
        state: { ...idle, mode: "replay", generation: 1, sentThrough: 4 },
        actions: [{ type: "dropQueue" }, { type: "forgetUnacked" }],
      },
    },
    {
      description: "a second catch-up while live starts over from its own position",
      input: { state: live, event: { type: "catchup", since: 2 } },
      expected: {
        state: { ...live, mode: "replay", generation: 2, sentThrough: 2 },
        actions: [{ type: "dropQueue" }, { type: "forgetUnacked" }],
      },
    },
    {
      description: "a catch-up opens a new window: what the last replay left unacked is forgotten",
      input: {
        state: { ...live, unacked: 2, unackedBytes: 40 },
        event: { type: "catchup", since: 0 },
      },
      expected: {
        state: { ...live, mode: "replay", generation: 2, sentThrough: 0 },
        actions: [{ type: "dropQueue" }, { type: "forgetUnacked" }],
      },
    },
    {
      description: "a resync goes back to idle and tells the replica",
      input: {
        state: { ...live, unacked: 1, unackedBytes: 9 },
        event: { type: "resync", reason: "ahead", current: 12 },
      },
      expected: {
        state: { ...live, mode: "idle", generation: 2 },
        actions: [{ type: "dropQueue" }, { type: "forgetUnacked" }, {
          type: "control",
          message: { type: "FullResyncRequired", reason: "ahead", current_sequence: 12n },
        }],
      },
    },
    {
      description: "an offer while idle is not kept",
      input: { state: idle, event: { type: "offer", bytes: 10, queued: 0, queuedBytes: 0 } },
      expected: { state: idle, actions: [] },
    },
    {
      description: "an offer while replaying is not kept: replay reads the store",
      input: { state: replay, event: { type: "offer", bytes: 10, queued: 0, queuedBytes: 0 } },
      expected: { state: replay, actions: [] },
    },
    {
      description: "an offer while live is queued",
      input: { state: live, event: { type: "offer", bytes: 10, queued: 2, queuedBytes: 90 } },
      expected: { state: live, actions: [{ type: "enqueue" }] },
    },
    {
      description: "an offer past the item bound drops the queue and goes back to replay",
      input: { state: live, event: { type: "offer", bytes: 1, queued: 3, queuedBytes: 3 } },
      expected: {
        state: { ...live, mode: "replay", overflows: 1 },
        actions: [{ type: "dropQueue" }, { type: "overflowed", dropped: 4 }],
      },
    },
    {
      description: "an offer past the byte bound drops the queue and goes back to replay",
      input: { state: live, event: { type: "offer", bytes: 11, queued: 1, queuedBytes: 90 } },
      expected: {
        state: { ...live, mode: "replay", overflows: 1 },
        actions: [{ type: "dropQueue" }, { type: "overflowed", dropped: 2 }],
      },
    },
    {
      description: "a replay with nothing left goes live and sends a heartbeat at once",
      input: { state: replay, event: { type: "replayed" } },
      expected: { state: { ...replay, mode: "live" }, actions: [{ type: "heartbeatSoon" }] },
    },
    {
      description: "a replay finishing after a resync changes nothing",
      input: { state: idle, event: { type: "replayed" } },
      expected: { state: idle, actions: [] },
    },
    {
      description: "a sent notification moves sentThrough forward and counts in the window",
      input: { state: live, event: { type: "sent", sequence: 11, bytes: 30 } },
      expected: { state: { ...live, sentThrough: 11, unacked: 1, unackedBytes: 30 }, actions: [] },
    },
    {
      description: "a filtered place moves sentThrough only: nothing reached the replica",
      input: { state: live, event: { type: "sent", sequence: 11, bytes: 0 } },
      expected: { state: { ...live, sentThrough: 11 }, actions: [] },
    },
    {
      description: "sentThrough never goes back (a resent notification still counts)",
      input: { state: live, event: { type: "sent", sequence: 3, bytes: 5 } },
      expected: { state: { ...live, unacked: 1, unackedBytes: 5 }, actions: [] },
    },
    {
      description: "an ack releases what it covers from the window",
      input: {
        state: { ...replay, unacked: 2, unackedBytes: 50 },
        event: { type: "acked", released: 1, releasedBytes: 20 },
      },
      expected: { state: { ...replay, unacked: 1, unackedBytes: 30 }, actions: [] },
    },
    {
      description: "the window never counts below empty",
      input: {
        state: { ...live, unacked: 1, unackedBytes: 10 },
        event: { type: "acked", released: 3, releasedBytes: 90 },
      },
      expected: { state: live, actions: [] },
    },
    {
      description: "a full window does not hold a heartbeat: it carries what was handed",
      input: { state: { ...replay, unacked: 2, unackedBytes: 50 }, event: { type: "heartbeat" } },
      expected: {
        state: { ...replay, unacked: 2, unackedBytes: 50 },
        actions: [{
          type: "send",
          message: { type: "Heartbeat", agent_sequence: 5n, agent_iteration: 5n },
        }],
      },
    },
    {
      description:
        "a full window with a live queue certifies no barrier; its deadline still answers",
      input: {
        state: {
          ...live,
          unacked: 2,
          unackedBytes: 50,
          barriers: [{ requested: 9, deadline: 1500 }, { requested: 9, deadline: 900 }],
        },
        event: { type: "idle", now: 1000, current: 9, queued: 1 },
      },
      expected: {
        state: {
          ...live,
          unacked: 2,
          unackedBytes: 50,
          barriers: [{ requested: 9, deadline: 1500 }],
        },
        actions: [confirmation(false, 9)],
      },
    },
    {
      description: "no heartbeat before the replica said where it is",
      input: { state: idle, event: { type: "heartbeat" } },
      expected: { state: idle, actions: [] },
    },
    {
      description: "a heartbeat carries sentThrough",
      input: { state: replay, event: { type: "heartbeat" } },
      expected: {
        state: replay,
        actions: [{
          type: "send",
          message: { type: "Heartbeat", agent_sequence: 5n, agent_iteration: 5n },
        }],
      },
    },
    {
      description: "a barrier while idle is answered at once, unsatisfied",
      input: { state: idle, event: { type: "barrier", requested: 3, now: 0, current: 7 } },
      expected: {
        state: idle,
        actions: [{
          type: "control",
          message: { type: "BarrierConfirmation", satisfied: false, current_sequence: 7n },
        }],
      },
    },
    {
      description: "a barrier while live waits, with its deadline",
      input: { state: live, event: { type: "barrier", requested: 9, now: 500, current: 9 } },
      expected: {
        state: { ...live, barriers: [{ requested: 9, deadline: 1500 }] },
        actions: [],
      },
    },
    {
      description: "a pending barrier is satisfied once live, caught up and reached",
      input: {
        state: { ...live, barriers: [{ requested: 8, deadline: 1500 }] },
        event: { type: "idle", now: 600, current: 9, queued: 0 },
      },
      expected: { state: live, actions: [confirmation(true, 9)] },
    },
    {
      description: "a pending barrier waits while notifications are queued",
      input: {
        state: { ...live, barriers: [{ requested: 8, deadline: 1500 }] },
        event: { type: "idle", now: 600, current: 9, queued: 1 },
      },
      expected: { state: { ...live, barriers: [{ requested: 8, deadline: 1500 }] }, actions: [] },
    },
    {
      description: "a pending barrier waits while replaying",
      input: {
        state: { ...replay, barriers: [{ requested: 3, deadline: 1500 }] },
        event: { type: "idle", now: 600, current: 5, queued: 0 },
      },
      expected: {
        state: { ...replay, barriers: [{ requested: 3, deadline: 1500 }] },
        actions: [],
      },
    },
    {
      description: "a pending barrier waits for a sequence the master has not reached",
      input: {
        state: { ...live, barriers: [{ requested: 20, deadline: 1500 }] },
        event: { type: "idle", now: 600, current: 9, queued: 0 },
      },
      expected: {
        state: { ...live, barriers: [{ requested: 20, deadline: 1500 }] },
        actions: [],
      },
    },
    {
      description: "a barrier past its deadline is answered unsatisfied; the others wait",
      input: {
        state: {
          ...live,
          barriers: [{ requested: 20, deadline: 1500 }, { requested: 30, deadline: 2500 }],
        },
        event: { type: "idle", now: 1500, current: 9, queued: 0 },
      },
      expected: {
        state: { ...live, barriers: [{ requested: 30, deadline: 2500 }] },
        actions: [confirmation(false, 9)],
      },
    },
  ];
  for (const { description, input, expected } of table) {
    await t.step(description, () => {
      assertEquals(stepChannel(input.state, input.event), expected);
    });
  }
});

Deno.test("nextBarrierDeadline() is when the executor must wake to answer a barrier", async (t) => {
  const table: {
    description: string;
    input: ChannelState;
    expected: number | null;
  }[] = [
    { description: "no barrier pending: no wake", input: live, expected: null },
    {
      description: "one barrier: its deadline",
      input: { ...live, barriers: [{ requested: 20, deadline: 1500 }] },
      expected: 1500,
    },
    {
      description: "several: the earliest, whatever their order",
      input: {
        ...live,
        barriers: [{ requested: 20, deadline: 2500 }, { requested: 30, deadline: 1500 }, {
          requested: 40,
          deadline: 2000,
        }],
      },
      expected: 1500,
    },
    {
      description: "a barrier answered leaves the next one's deadline",
      input: stepChannel({
        ...live,
        barriers: [{ requested: 9, deadline: 1500 }, { requested: 30, deadline: 2500 }],
      }, { type: "idle", now: 600, current: 9, queued: 0 }).state,
      expected: 2500,
    },
  ];
  for (const { description, input, expected } of table) {
    await t.step(description, () => {
      assertEquals(nextBarrierDeadline(input), expected);
    });
  }
});

Deno.test("windowOpen() holds notifications past the window until an ack", async (t) => {
  const table: { description: string; input: ChannelState; expected: boolean }[] = [
    { description: "nothing unacknowledged: open", input: replay, expected: true },
    {
      description: "below both bounds: open",
      input: { ...replay, unacked: 1, unackedBytes: 49 },
      expected: true,
    },
    {
      description: "as many notifications as the window: closed",
      input: { ...live, unacked: 2, unackedBytes: 2 },
      expected: false,
    },
    {
      description: "as many bytes as the window: closed, however few notifications",
      input: { ...live, unacked: 1, unackedBytes: 50 },
      expected: false,
    },
    {
      description: "a full window, then an ack of one: open again",
      input: stepChannel({ ...live, unacked: 2, unackedBytes: 20 }, {
        type: "acked",
        released: 1,
        releasedBytes: 10,
      }).state,
      expected: true,
    },
    {
      description: "a catch-up empties a full window",
      input: stepChannel({ ...live, unacked: 2, unackedBytes: 60 }, { type: "catchup", since: 0 })
        .state,
      expected: true,
    },
  ];
  for (const { description, input, expected } of table) {
    await t.step(description, () => {
      assertEquals(windowOpen(input), expected);
    });
  }
});
