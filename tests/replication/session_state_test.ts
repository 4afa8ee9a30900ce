/** The master's per-connection pure state machine, tested by a table. */
import { assertEquals } from "./_assert.ts";
import {
  INITIAL_SESSION_STATE,
  type SessionAction,
  type SessionEvent,
  type SessionState,
  stepSession,
  WRITEBACKS_OUTSTANDING,
} from "../../lib/replication/session_state.ts";
import type { WriteBackEntry } from "../../lib/wire/mod.ts";

const fresh = INITIAL_SESSION_STATE;
const open: SessionState = { phase: "open", sandboxId: "sb-1", acked: 5, writeBacksOutstanding: 0 };
const position = { current: 20, floor: 0 };
const entries: WriteBackEntry[] = [];

function catchup(sandboxId: string, since: bigint, at = position): SessionEvent {
  return {
    type: "catchup",
    message: { type: "CatchupRequest", sandbox_id: sandboxId, since_sequence: since },
    position: at,
  };
}

function writeBack(sandboxId: string): SessionEvent {
  return { type: "message", message: { type: "WriteBack", sandbox_id: sandboxId, entries } };
}

function ack(upTo: bigint): SessionEvent {
  return { type: "message", message: { type: "Ack", up_to_sequence: upTo } };
}

Deno.test("stepSession() runs one replica connection on the master", async (t) => {
  const table: {
    description: string;
    input: { state: SessionState; event: SessionEvent };
    expected: { state: SessionState; actions: SessionAction[] };
  }[] = [
    {
      description: "a catch-up identifies the replica and replays after its sequence",
      input: { state: fresh, event: catchup("sb-1", 7n) },
      expected: {
        state: { ...fresh, phase: "open", sandboxId: "sb-1" },
        actions: [{ type: "identified", sandboxId: "sb-1" }, { type: "replay", since: 7 }],
      },
    },
    {
      description: "a second catch-up of the same replica replays without registering again",
      input: { state: open, event: catchup("sb-1", 3n) },
      expected: { state: open, actions: [{ type: "replay", since: 3 }] },
    },
    {
      description: "a replica ahead of the master must resync",
      input: { state: fresh, event: catchup("sb-1", 21n) },
      expected: {
        state: { ...fresh, phase: "open", sandboxId: "sb-1" },
        actions: [{ type: "identified", sandboxId: "sb-1" }, {
          type: "resync",
          reason: "replica is at sequence 21, ahead of the master's 20",
        }],
      },
    },
    {
      description: "a sequence past 2^53 is ahead of any master",
      input: { state: open, event: catchup("sb-1", 2n ** 60n) },
      expected: {
        state: open,
        actions: [{
          type: "resync",
          reason: "replica is at sequence Infinity, ahead of the master's 20",
        }],
      },
    },
    {
      description: "a replica behind the history floor must resync",
      input: { state: open, event: catchup("sb-1", 3n, { current: 20, floor: 10 }) },
      expected: {
        state: open,
        actions: [{ type: "resync", reason: "history after sequence 3 is gone (kept from 10)" }],
      },
    },
    {
      description: "an invalid sandbox id closes the connection",
      input: { state: fresh, event: catchup("../x", 0n) },
      expected: {
        state: fresh,
        actions: [{
          type: "close",
          reason: "invalid sandbox id: it contains a slash or backslash",
        }],
      },
    },
    {
      description: "a sandbox id may not change on one connection",
      input: { state: open, event: catchup("sb-2", 0n) },
      expected: {
        state: open,
        actions: [{ type: "close", reason: 'sandbox id changed from "sb-1" to "sb-2"' }],
      },
    },
    {
      description: "an Ack during the handshake closes the connection",
      input: { state: fresh, event: ack(3n) },
      expected: { state: fresh, actions: [{ type: "close", reason: "Ack before CatchupRequest" }] },
    },
    {
      description: "an Ack after a write-back but before the catch-up closes the connection",
      input: { state: { ...fresh, sandboxId: "sb-1", writeBacksOutstanding: 1 }, event: ack(3n) },
      expected: {
        state: { ...fresh, sandboxId: "sb-1", writeBacksOutstanding: 1 },
        actions: [{ type: "close", reason: "Ack before CatchupRequest" }],
      },
    },
    {
      description: "a catch-up after a write-back opens the connection without registering again",
      input: { state: { ...fresh, sandboxId: "sb-1" }, event: catchup("sb-1", 0n) },
      expected: {
        state: { ...fresh, phase: "open", sandboxId: "sb-1" },
        actions: [{ type: "replay", since: 0 }],
      },
    },
    {
      description: "a higher Ack is recorded, and opens the push channel's window",
      input: { state: open, event: ack(9n) },
      expected: {
        state: { ...open, acked: 9 },
        actions: [{ type: "recordAck", sandboxId: "sb-1", sequence: 9 }, {
          type: "window",
          sequence: 9,
        }],
      },
    },
    {
      description:
        "a lower or equal Ack is not recorded (acks are cumulative); the window hears it",
      input: { state: open, event: ack(5n) },
      expected: { state: open, actions: [{ type: "window", sequence: 5 }] },
    },
    {
      description: "a content fetch is queued",
      input: {
        state: open,
        event: { type: "message", message: { type: "ContentFetchRequest", content_hash: "ab" } },
      },
      expected: { state: open, actions: [{ type: "fetch", hash: "ab" }] },
    },
    {
      description: "a barrier goes to the push channel, even during the handshake",
      input: {
        state: fresh,
        event: { type: "message", message: { type: "BarrierRequest", sequence: 12n } },
      },
      expected: { state: fresh, actions: [{ type: "barrier", requested: 12 }] },
    },
    {
      description: "a write-back during the handshake identifies the replica and is applied",
      input: { state: fresh, event: writeBack("sb-1") },
      expected: {
        state: { phase: "handshake", sandboxId: "sb-1", acked: 0, writeBacksOutstanding: 1 },
        actions: [{ type: "identified", sandboxId: "sb-1" }, {
          type: "applyWriteBack",
          sandboxId: "sb-1",
          entries,
        }],
      },
    },
    {
      description: "a write-back under another sandbox id closes the connection",
      input: { state: open, event: writeBack("sb-2") },
      expected: {
        state: open,
        actions: [{ type: "close", reason: 'sandbox id changed from "sb-1" to "sb-2"' }],
      },
    },
    {
      description: "too many write-back batches unanswered close the connection",
      input: {
        state: { ...open, writeBacksOutstanding: WRITEBACKS_OUTSTANDING },
        event: writeBack("sb-1"),
      },
      expected: {
        state: { ...open, writeBacksOutstanding: WRITEBACKS_OUTSTANDING },
        actions: [{
          type: "close",
          reason: `more than ${WRITEBACKS_OUTSTANDING} write-back batches unanswered`,
        }],
      },
    },
    {
      description: "an answered write-back frees its place",
      input: { state: { ...open, writeBacksOutstanding: 2 }, event: { type: "writeBackAnswered" } },
      expected: { state: { ...open, writeBacksOutstanding: 1 }, actions: [] },
    },
    {
      description: "a message only a master sends closes the connection",
      input: {
        state: open,
        event: {
          type: "message",
          message: { type: "Heartbeat", agent_sequence: 1n, agent_iteration: 1n },
        },
      },
      expected: {
        state: open,
        actions: [{ type: "close", reason: "unexpected Heartbeat from a replica" }],
      },
    },
    {
      description: "silence through the handshake closes the connection",
      input: { state: fresh, event: { type: "silent", ms: 10000 } },
      expected: {
        state: fresh,
        actions: [{ type: "close", reason: "no message within 10000 ms" }],
      },
    },
  ];
  for (const { description, input, expected } of table) {
    await t.step(description, () => {
      assertEquals(stepSession(input.state, input.event), expected);
    });
  }
});
