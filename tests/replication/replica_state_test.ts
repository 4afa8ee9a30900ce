/** The replica's per-connection pure state machine, tested by tables. */
import { assertEquals } from "./_assert.ts";
import {
  ACK_EVERY,
  baseSilenceMs,
  initialReplicaState,
  LARGE_CATCHUP,
  MAX_SILENCE_MS,
  nextSilenceMs,
  type ReplicaAction,
  type ReplicaEvent,
  type ReplicaState,
  stepReplica,
} from "../../lib/replication/replica_state.ts";
import type { JournalEntry } from "../../lib/replication/mod.ts";
import type { NotificationMessage } from "../../lib/wire/mod.ts";

const fresh = initialReplicaState({
  mode: "sandbox",
  silenceMs: 3000,
  applied: 10,
  masterSequence: 10,
  resyncPending: false,
  now: 1000,
});
/** Asked to catch up after 10, its probe not answered yet. */
const asked: ReplicaState = {
  ...fresh,
  catchupSent: true,
  since: 10,
  barriers: [{ id: -1, purpose: "probe" }],
};
/** Probed: the master was at 20 when the connection began. */
const syncing: ReplicaState = { ...asked, barriers: [], catchupTarget: 20, masterSequence: 20 };
const live: ReplicaState = { ...syncing, applied: 20, reachedLive: true };
const resyncing: ReplicaState = { ...syncing, resync: { target: 30 }, since: 0 };

function notification(filepath: string, sequence = 21): NotificationMessage {
  return {
    type: "Notification",
    sequence: BigInt(sequence),
    filepath,
    content_hash: "",
    size: 0n,
    permissions: 0o100644n,
    is_deletion: true,
    inline_content: null,
  };
}

/** What routing a notification does: prefetch its content, queue it for the applier. */
function routed(message: NotificationMessage): ReplicaAction[] {
  return [{ type: "prefetch", message }, { type: "enqueue", item: message }];
}

function entry(state: JournalEntry["state"], path: string, reason: string | null): JournalEntry {
  return {
    localSeq: 1,
    sourceSeq: 1,
    path,
    operation: "write",
    newPath: null,
    hash: "h",
    size: 1,
    mode: 0o100644,
    deleted: false,
    masterSeen: 0,
    state,
    reason,
    masterSeq: state === "accepted" ? 25 : null,
    createdMs: 0,
  };
}

interface Row {
  description: string;
  input: { state: ReplicaState; event: ReplicaEvent };
  expected: { state: ReplicaState; actions: ReplicaAction[] };
}

function run(table: Row[]) {
  return async (t: Deno.TestContext) => {
    for (const { description, input, expected } of table) {
      await t.step(description, () => {
        assertEquals(stepReplica(input.state, input.event), expected);
      });
    }
  };
}

Deno.test(
  "stepReplica() routes the master's messages",
  run([
    {
      description: "a notification is prefetched and queued, and the master was heard",
      input: { state: live, event: { type: "message", message: notification("a"), now: 5000 } },
      expected: {
        state: { ...live, lastHeardAt: 5000, highestReceived: 21 },
        actions: routed(notification("a")),
      },
    },
    {
      description: "a notification for a path leaving the workspace closes the connection",
      input: { state: live, event: { type: "message", message: notification("../x"), now: 1 } },
      expected: {
        state: { ...live, lastHeardAt: 1 },
        actions: [{
          type: "close",
          reason: 'notification for a path leaving the workspace: "../x"',
        }],
      },
    },
    {
      description: "a path that is not normalized is listed as a problem, not applied",
      input: { state: live, event: { type: "message", message: notification("a//b"), now: 1 } },
      expected: {
        state: { ...live, lastHeardAt: 1 },
        actions: [{
          type: "problem",
          path: "a//b",
          reason: 'not applied: path "a//b" is not normalized',
        }],
      },
    },
    {
      description: "a full resync forgets what was accepted here, then waits its turn",
      input: {
        state: live,
        event: {
          type: "message",
          message: { type: "FullResyncRequired", reason: "replaced", current_sequence: 3n },
          now: 1,
        },
      },
      expected: {
        state: { ...live, lastHeardAt: 1 },
        actions: [{ type: "forgetAccepted" }, {
          type: "enqueue",
          item: { type: "FullResyncRequired", reason: "replaced", current_sequence: 3n },
        }],
      },
    },
    {
      description: "a content answer goes straight to the fetcher, not through the queue",
      input: {
        state: live,
        event: { type: "message", message: { type: "ContentNotFound", content_hash: "h" }, now: 1 },
      },
      expected: {
        state: { ...live, lastHeardAt: 1 },
        actions: [{ type: "answer", message: { type: "ContentNotFound", content_hash: "h" } }],
      },
    },
    {
      description: "a message only a replica sends closes the connection",
      input: {
        state: live,
        event: { type: "message", message: { type: "Ack", up_to_sequence: 1n }, now: 1 },
      },
      expected: {
        state: { ...live, lastHeardAt: 1 },
        actions: [{ type: "close", reason: "unexpected Ack from the master" }],
      },
    },
  ]),
);

Deno.test(
  "stepReplica() catches up, goes live and watches the master's silence",
  run([
    {
      description: "the catch-up saves the position, then probes and asks after it",
      input: { state: fresh, event: { type: "catchup" } },
      expected: {
        state: asked,
        actions: [{ type: "saveApplied" }, { type: "requestCatchup", since: 10 }],
      },
    },
    {
      description: "a pending resync asks from the start",
      input: { state: { ...fresh, resync: { target: null } }, event: { type: "catchup" } },
      expected: {
        state: { ...asked, since: 0, resync: { target: null } },
        actions: [{ type: "requestCatchup", since: 0 }],
      },
    },
    {
      description: "the probe's answer sets the target, certifying nothing",
      input: { state: asked, event: { type: "confirmation", current: 20, satisfied: false } },
      expected: { state: syncing, actions: [] },
    },
    {
      description: "a large catch-up pauses the watcher and shows progress",
      input: {
        state: asked,
        event: { type: "confirmation", current: 10 + LARGE_CATCHUP, satisfied: true },
      },
      expected: {
        state: {
          ...syncing,
          catchupTarget: 10 + LARGE_CATCHUP,
          masterSequence: 10 + LARGE_CATCHUP,
        },
        actions: [{ type: "pauseWatching" }, {
          type: "startProgress",
          label: "catch-up",
          from: 10,
          to: 10 + LARGE_CATCHUP,
        }],
      },
    },
    {
      description: "a heartbeat short of the target moves the position only",
      input: { state: syncing, event: { type: "heartbeat", sequence: 15 } },
      expected: { state: { ...syncing, applied: 15, masterSequence: 15 }, actions: [] },
    },
    {
      description: "a heartbeat reaching the target goes live",
      input: { state: syncing, event: { type: "heartbeat", sequence: 20 } },
      expected: {
        state: live,
        actions: [
          { type: "finishProgress" },
          { type: "inSync", sequence: 20 },
          { type: "resumeWatching" },
        ],
      },
    },
    {
      description: "a heartbeat behind what was applied asks again, once (a replaced master)",
      input: { state: live, event: { type: "heartbeat", sequence: 4 } },
      expected: {
        state: { ...live, masterSequence: 4, askedForResync: true },
        actions: [{ type: "askCatchup", since: 20 }],
      },
    },
    {
      description: "and not twice",
      input: {
        state: { ...live, askedForResync: true },
        event: { type: "heartbeat", sequence: 4 },
      },
      expected: { state: { ...live, askedForResync: true, masterSequence: 4 }, actions: [] },
    },
    {
      description: "before the catch-up, silence does not count",
      input: { state: fresh, event: { type: "tick", now: 9000, fetching: 0 } },
      expected: { state: { ...fresh, lastHeardAt: 9000 }, actions: [] },
    },
    {
      description: "a master silent past the limit is left",
      input: { state: live, event: { type: "tick", now: 4001, fetching: 0 } },
      expected: {
        state: { ...live, leftSilent: true },
        actions: [{ type: "close", reason: "master silent for more than 3000 ms" }],
      },
    },
    {
      description: "a master silent within the limit is not",
      input: { state: live, event: { type: "tick", now: 4000, fetching: 0 } },
      expected: { state: live, actions: [] },
    },
    {
      description: "a fetch unanswered before the catch-up counts as silence",
      input: { state: fresh, event: { type: "tick", now: 4001, fetching: 1 } },
      expected: {
        state: { ...fresh, leftSilent: true },
        actions: [{ type: "close", reason: "master silent for more than 3000 ms" }],
      },
    },
  ]),
);

Deno.test("nextSilenceMs() doubles the silence tolerated after each connection left for it", () => {
  const base = baseSilenceMs(1000);
  const table: {
    description: string;
    current: number;
    ended: { silent: boolean; reachedLive: boolean };
    expected: number;
  }[] = [
    {
      description: "left for silence: twice as long next time",
      current: base,
      ended: { silent: true, reachedLive: true },
      expected: 2 * base,
    },
    {
      description: "again, whether or not it had reached live",
      current: 2 * base,
      ended: { silent: true, reachedLive: false },
      expected: 4 * base,
    },
    {
      description: "never past the most",
      current: 40_000,
      ended: { silent: true, reachedLive: true },
      expected: MAX_SILENCE_MS,
    },
    {
      description: "a connection that reached live and ended otherwise goes back to the base",
      current: 4 * base,
      ended: { silent: false, reachedLive: true },
      expected: base,
    },
    {
      description: "one cut before it reached live keeps what it had",
      current: 4 * base,
      ended: { silent: false, reachedLive: false },
      expected: 4 * base,
    },
  ];
  assertEquals(base, 5000);
  assertEquals(baseSilenceMs(100), 3000, "at least 3 s");
  assertEquals(
    nextSilenceMs(90_000, 90_000, { silent: true, reachedLive: true }),
    90_000,
    "a base above the most stays",
  );
  for (const { description, current, ended, expected } of table) {
    assertEquals(nextSilenceMs(current, base, ended), expected, description);
  }
});

Deno.test(
  "stepReplica() answers barriers in order",
  run([
    {
      description: "a barrier is queued behind the probe and sent",
      input: { state: asked, event: { type: "barrier", id: 0 } },
      expected: {
        state: { ...asked, barriers: [...asked.barriers, { id: 0, purpose: "wait" }] },
        actions: [{ type: "sendBarrier" }],
      },
    },
    {
      description: "a satisfied barrier certifies the position and resolves",
      input: {
        state: { ...syncing, barriers: [{ id: 3, purpose: "wait" }] },
        event: { type: "confirmation", current: 20, satisfied: true },
      },
      expected: {
        state: live,
        actions: [
          { type: "finishProgress" },
          { type: "inSync", sequence: 20 },
          { type: "resumeWatching" },
          {
            type: "resolveBarrier",
            id: 3,
            result: { satisfied: true, masterSequence: 20, appliedSequence: 20 },
          },
        ],
      },
    },
    {
      description: "an unsatisfied barrier resolves to nothing (syncWait asks again)",
      input: {
        state: { ...live, barriers: [{ id: 3, purpose: "wait" }] },
        event: { type: "confirmation", current: 20, satisfied: false },
      },
      expected: { state: live, actions: [{ type: "resolveBarrier", id: 3, result: null }] },
    },
    {
      description: "a confirmation with no barrier asked is ignored",
      input: { state: live, event: { type: "confirmation", current: 99, satisfied: true } },
      expected: { state: live, actions: [] },
    },
    {
      description: "a barrier during a resync short of its target certifies nothing",
      input: {
        state: { ...resyncing, barriers: [{ id: 1, purpose: "wait" }] },
        event: { type: "confirmation", current: 25, satisfied: true },
      },
      expected: {
        state: { ...resyncing, masterSequence: 25, resyncApplied: 25 },
        actions: [{ type: "resolveBarrier", id: 1, result: null }],
      },
    },
    {
      description: "a barrier reaching the resync's target sweeps, then resolves",
      input: {
        state: { ...resyncing, barriers: [{ id: 1, purpose: "wait" }] },
        event: { type: "confirmation", current: 30, satisfied: true },
      },
      expected: {
        state: { ...resyncing, masterSequence: 30, resyncApplied: 30 },
        actions: [{ type: "sweepResync", sequence: 30 }, {
          type: "resolveBarrier",
          id: 1,
          result: { satisfied: true, masterSequence: 30, appliedSequence: 30 },
        }],
      },
    },
  ]),
);

/** Live, applied up to 20, with a burst's notifications received up to 20 + LARGE_CATCHUP. */
const bursting: ReplicaState = {
  ...live,
  burstPaused: true,
  highestReceived: 20 + LARGE_CATCHUP,
};
const far = notification("a", 20 + LARGE_CATCHUP);

Deno.test(
  "stepReplica() pauses the watcher while a large change arriving live is applied",
  run([
    {
      description: "a notification that far ahead of what is applied pauses it, first",
      input: { state: live, event: { type: "message", message: far, now: 1000 } },
      expected: {
        state: bursting,
        actions: [
          { type: "pauseWatching", burst: true },
          ...routed(far),
        ],
      },
    },
    {
      description: "one short of that does not",
      input: {
        state: live,
        event: { type: "message", message: notification("a", 19 + LARGE_CATCHUP), now: 1000 },
      },
      expected: {
        state: { ...live, highestReceived: 19 + LARGE_CATCHUP },
        actions: routed(notification("a", 19 + LARGE_CATCHUP)),
      },
    },
    {
      description: "nor does one during the catch-up (its own size decides)",
      input: { state: syncing, event: { type: "message", message: far, now: 1000 } },
      expected: {
        state: { ...syncing, highestReceived: 20 + LARGE_CATCHUP },
        actions: routed(far),
      },
    },
    {
      description: "nor one during a resync",
      input: {
        state: { ...live, resync: { target: 30 } },
        event: { type: "message", message: far, now: 1000 },
      },
      expected: {
        state: { ...live, resync: { target: 30 }, highestReceived: 20 + LARGE_CATCHUP },
        actions: routed(far),
      },
    },
    {
      description: "paused already, the next notification only counts",
      input: {
        state: bursting,
        event: { type: "message", message: notification("b", 30 + LARGE_CATCHUP), now: 1000 },
      },
      expected: {
        state: { ...bursting, highestReceived: 30 + LARGE_CATCHUP },
        actions: routed(notification("b", 30 + LARGE_CATCHUP)),
      },
    },
    {
      description: "a heartbeat short of what was received moves the position only",
      input: { state: bursting, event: { type: "heartbeat", sequence: 100 } },
      expected: { state: { ...bursting, applied: 100, masterSequence: 100 }, actions: [] },
    },
    {
      description: "a heartbeat certifying all that was received resumes it",
      input: { state: bursting, event: { type: "heartbeat", sequence: 20 + LARGE_CATCHUP } },
      expected: {
        state: {
          ...bursting,
          burstPaused: false,
          applied: 20 + LARGE_CATCHUP,
          masterSequence: 20 + LARGE_CATCHUP,
        },
        actions: [{ type: "resumeWatching" }],
      },
    },
    {
      description: "so does a satisfied barrier",
      input: {
        state: { ...bursting, barriers: [{ id: 3, purpose: "wait" }] },
        event: { type: "confirmation", current: 20 + LARGE_CATCHUP, satisfied: true },
      },
      expected: {
        state: {
          ...bursting,
          burstPaused: false,
          applied: 20 + LARGE_CATCHUP,
          masterSequence: 20 + LARGE_CATCHUP,
        },
        actions: [{ type: "resumeWatching" }, {
          type: "resolveBarrier",
          id: 3,
          result: {
            satisfied: true,
            masterSequence: 20 + LARGE_CATCHUP,
            appliedSequence: 20 + LARGE_CATCHUP,
          },
        }],
      },
    },
  ]),
);

Deno.test(
  "stepReplica() runs a full resync",
  run([
    {
      description:
        "a required resync is stored, asks from the start, and shows progress when large",
      input: {
        state: live,
        event: { type: "resyncRequired", current: LARGE_CATCHUP, reason: "replaced" },
      },
      expected: {
        state: { ...live, resync: { target: LARGE_CATCHUP }, since: 0 },
        actions: [
          { type: "startResync", target: LARGE_CATCHUP, reason: "replaced" },
          { type: "finishProgress" },
          { type: "pauseWatching" },
          { type: "startProgress", label: "full resync", from: 0, to: LARGE_CATCHUP },
          { type: "askCatchup", since: 0 },
        ],
      },
    },
    {
      description: "a pending resync takes its target from the probe",
      input: {
        state: { ...asked, since: 0, resync: { target: null } },
        event: { type: "confirmation", current: 7, satisfied: true },
      },
      expected: {
        state: { ...syncing, since: 0, resync: { target: 7 }, catchupTarget: 7, masterSequence: 7 },
        actions: [],
      },
    },
    {
      description: "notifications applied during a resync do not move the position",
      input: { state: resyncing, event: { type: "applied", last: 29, count: 2 } },
      expected: { state: { ...resyncing, sinceAck: 2, resyncApplied: 29 }, actions: [] },
    },
    {
      description: "a heartbeat reaching the target sweeps what the master no longer has",
      input: { state: resyncing, event: { type: "heartbeat", sequence: 31 } },
      expected: {
        state: { ...resyncing, masterSequence: 31, resyncApplied: 31 },
        actions: [{ type: "sweepResync", sequence: 31 }],
      },
    },
    {
      description:
        "a resync's replay is acknowledged as it is applied (the master's window), storing nothing",
      input: {
        state: { ...resyncing, applied: 40, resyncApplied: 29, sinceAck: 2 },
        event: { type: "handled", queued: 0 },
      },
      expected: {
        state: { ...resyncing, applied: 40, resyncApplied: 29, lastAcked: 29, ackInFlight: true },
        actions: [{ type: "sendAck", sequence: 29 }],
      },
    },
    {
      description: "a resync's replay is acknowledged from its start, below an earlier ack",
      input: {
        state: { ...resyncing, lastAcked: 90, resyncApplied: 12, sinceAck: 300 },
        event: { type: "handled", queued: 5 },
      },
      expected: {
        state: { ...resyncing, lastAcked: 12, resyncApplied: 12, ackInFlight: true },
        actions: [{ type: "sendAck", sequence: 12 }],
      },
    },
    {
      description: "a resync with nothing of its replay applied yet acknowledges nothing",
      input: { state: { ...resyncing, applied: 40 }, event: { type: "handled", queued: 0 } },
      expected: { state: { ...resyncing, applied: 40 }, actions: [] },
    },
    {
      description: "a resync's position already acknowledged: nothing sent",
      input: {
        state: { ...resyncing, resyncApplied: 12, lastAcked: 12 },
        event: { type: "handled", queued: 0 },
      },
      expected: { state: { ...resyncing, resyncApplied: 12, lastAcked: 12 }, actions: [] },
    },
    {
      description: "the sweep done ends the resync at its sequence",
      input: { state: resyncing, event: { type: "resyncSwept", sequence: 31, removed: 2 } },
      expected: {
        state: { ...resyncing, resync: null, applied: 31, reachedLive: true },
        actions: [
          { type: "resyncDone", sequence: 31, removed: 2 },
          { type: "finishProgress" },
          { type: "resumeWatching" },
        ],
      },
    },
  ]),
);

Deno.test(
  "stepReplica() acknowledges what is applied, one Ack at a time",
  run([
    {
      description: "notifications applied move the position",
      input: { state: live, event: { type: "applied", last: 24, count: 4 } },
      expected: { state: { ...live, applied: 24, sinceAck: 4 }, actions: [] },
    },
    {
      description: "a batch cut short keeps what came before the lost fetch",
      input: { state: live, event: { type: "cut", applied: 22 } },
      expected: { state: { ...live, applied: 22 }, actions: [] },
    },
    {
      description: "nothing left queued: saved, then acknowledged",
      input: {
        state: { ...live, applied: 24, sinceAck: 4 },
        event: { type: "handled", queued: 0 },
      },
      expected: {
        state: { ...live, applied: 24, lastAcked: 24, ackInFlight: true },
        actions: [{ type: "saveApplied" }, { type: "sendAck", sequence: 24 }],
      },
    },
    {
      description: "more queued and few applied: not yet",
      input: {
        state: { ...live, applied: 24, sinceAck: 4 },
        event: { type: "handled", queued: 9 },
      },
      expected: { state: { ...live, applied: 24, sinceAck: 4 }, actions: [] },
    },
    {
      description: "a long replay acknowledges every ACK_EVERY notifications",
      input: {
        state: { ...live, applied: 300, sinceAck: ACK_EVERY },
        event: { type: "handled", queued: 9 },
      },
      expected: {
        state: { ...live, applied: 300, lastAcked: 300, ackInFlight: true },
        actions: [{ type: "saveApplied" }, { type: "sendAck", sequence: 300 }],
      },
    },
    {
      description: "before the catch-up request, saved but not acknowledged",
      input: { state: { ...fresh, applied: 12 }, event: { type: "handled", queued: 0 } },
      expected: { state: { ...fresh, applied: 12 }, actions: [{ type: "saveApplied" }] },
    },
    {
      description: "nothing new applied: nothing sent",
      input: { state: { ...live, lastAcked: 20 }, event: { type: "handled", queued: 0 } },
      expected: { state: { ...live, lastAcked: 20 }, actions: [] },
    },
    {
      description: "an Ack in flight: the newer position waits for it",
      input: {
        state: { ...live, applied: 24, lastAcked: 20, ackInFlight: true },
        event: { type: "handled", queued: 0 },
      },
      expected: {
        state: { ...live, applied: 24, lastAcked: 24, ackInFlight: true, ackAgain: true },
        actions: [{ type: "saveApplied" }],
      },
    },
    {
      description: "the Ack out, the newer position is sent",
      input: {
        state: { ...live, applied: 24, lastAcked: 24, ackInFlight: true, ackAgain: true },
        event: { type: "ackSent" },
      },
      expected: {
        state: { ...live, applied: 24, lastAcked: 24, ackInFlight: true },
        actions: [{ type: "sendAck", sequence: 24 }],
      },
    },
    {
      description: "the Ack out and nothing newer: idle",
      input: { state: { ...live, ackInFlight: true }, event: { type: "ackSent" } },
      expected: { state: live, actions: [] },
    },
  ]),
);

const accepted = entry("accepted", "a.txt", null);
const conflict = entry("rejected", "b.txt", 'conflict: "b.txt" changed at sequence 3');
const refused = entry("rejected", "c.txt", "refused: not allowed");
const renamed: JournalEntry = { ...accepted, operation: "rename", newPath: "d.txt" };

Deno.test(
  "stepReplica() records write-back answers and releases their paths in turn",
  run([
    {
      description: "an accepted entry is recorded and its path released in turn",
      input: { state: live, event: { type: "answered", entries: [accepted] } },
      expected: {
        state: { ...live, releasing: new Map([["a.txt", 1]]) },
        actions: [
          { type: "accepted", path: "a.txt", masterSeq: 25, localSeq: 1 },
          {
            type: "enqueue",
            item: { type: "Release", paths: [{ path: "a.txt", restore: false }] },
          },
        ],
      },
    },
    {
      description: "an accepted rename: its source is recorded as removed by the master",
      input: { state: live, event: { type: "answered", entries: [renamed] } },
      expected: {
        state: { ...live, releasing: new Map([["a.txt", 1], ["d.txt", 1]]) },
        actions: [
          { type: "accepted", path: "a.txt", masterSeq: 25, localSeq: 1, removed: true },
          { type: "accepted", path: "d.txt", masterSeq: 25, localSeq: 1 },
          {
            type: "enqueue",
            item: {
              type: "Release",
              paths: [{ path: "a.txt", restore: false }, { path: "d.txt", restore: false }],
            },
          },
        ],
      },
    },
    {
      description: "a conflict in sandbox mode takes the master's version back",
      input: { state: live, event: { type: "answered", entries: [conflict] } },
      expected: {
        state: { ...live, releasing: new Map([["b.txt", 1]]) },
        actions: [
          {
            type: "rejected",
            entry: conflict,
            reason: conflict.reason!,
            conflict: true,
            keep: "upstream",
          },
          { type: "enqueue", item: { type: "Release", paths: [{ path: "b.txt", restore: true }] } },
        ],
      },
    },
    {
      description: "another refusal in sandbox mode releases without restoring",
      input: { state: live, event: { type: "answered", entries: [refused] } },
      expected: {
        state: { ...live, releasing: new Map([["c.txt", 1]]) },
        actions: [
          {
            type: "rejected",
            entry: refused,
            reason: refused.reason!,
            conflict: false,
            keep: null,
          },
          {
            type: "enqueue",
            item: { type: "Release", paths: [{ path: "c.txt", restore: false }] },
          },
        ],
      },
    },
    {
      description: "a conflict in local-sync mode is left to a person: nothing released",
      input: {
        state: { ...live, mode: "local-sync" },
        event: { type: "answered", entries: [conflict] },
      },
      expected: {
        state: { ...live, mode: "local-sync" },
        actions: [{
          type: "rejected",
          entry: conflict,
          reason: conflict.reason!,
          conflict: true,
          keep: null,
        }],
      },
    },
    {
      description: "a release's turn counts it down and applies what was held back",
      input: {
        state: { ...live, releasing: new Map([["a.txt", 2], ["b.txt", 1]]) },
        event: {
          type: "release",
          paths: [{ path: "a.txt", restore: false }, { path: "b.txt", restore: true }],
        },
      },
      expected: {
        state: { ...live, releasing: new Map([["a.txt", 1]]) },
        actions: [{
          type: "releaseAll",
          paths: [{ path: "a.txt", restore: false }, { path: "b.txt", restore: true }],
        }],
      },
    },
  ]),
);
