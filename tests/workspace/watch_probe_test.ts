import assert from "node:assert/strict";
import {
  LATE_TICK_MS,
  MAX_RESTARTS,
  PROBE_IDLE_MS,
  type ProbeAction,
  type ProbeInput,
  probeStart,
  type ProbeState,
  probeStep,
  STALL_MS,
  STALL_RESTART_MS,
} from "../../lib/workspace/watch_probe.ts";

const T = 1_000_000;
const tick = (at: number, lateMs = 0): ProbeInput => ({ type: "tick", nowMs: T + at, lateMs });
const heard = (at: number): ProbeInput => ({ type: "heard", nowMs: T + at });
const touched = (at: number, stalledAt: number | null = null, restarts = 0): ProbeState => ({
  heardAt: T,
  touchedAt: T + at,
  stalledAt: stalledAt === null ? null : T + stalledAt,
  restarts,
});

Deno.test("probeStep() touches a quiet watcher, reports it stalled once when it stays silent, and makes it again when the stall lasts", async (t) => {
  const table: Array<{
    description: string;
    input: { state: ProbeState; input: ProbeInput };
    expected: { state: ProbeState; action: ProbeAction };
  }> = [
    {
      description: "quiet for less than the idle time: nothing",
      input: { state: probeStart(T), input: tick(PROBE_IDLE_MS - 1) },
      expected: { state: probeStart(T), action: null },
    },
    {
      description: "quiet for the idle time: touched",
      input: { state: probeStart(T), input: tick(PROBE_IDLE_MS) },
      expected: { state: touched(PROBE_IDLE_MS), action: "touch" },
    },
    {
      description: "touched, silent for less than the stall time: waits, no second touch",
      input: { state: touched(0), input: tick(STALL_MS - 1) },
      expected: { state: touched(0), action: null },
    },
    {
      description: "touched, silent for the stall time: stalled",
      input: { state: touched(0), input: tick(STALL_MS) },
      expected: { state: touched(0, STALL_MS), action: "stalled" },
    },
    {
      description: "stalled already: said once, not at every tick",
      input: { state: touched(0, STALL_MS), input: tick(STALL_MS + STALL_RESTART_MS - 1) },
      expected: { state: touched(0, STALL_MS), action: null },
    },
    {
      description: "stalled for as long as a scan may take to end it: made again",
      input: { state: touched(0, STALL_MS), input: tick(STALL_MS + STALL_RESTART_MS) },
      expected: {
        state: { ...probeStart(T + STALL_MS + STALL_RESTART_MS), restarts: 1 },
        action: "restart",
      },
    },
    {
      description: "made again as often as it may be: said so, once",
      input: {
        state: touched(0, STALL_MS, MAX_RESTARTS),
        input: tick(STALL_MS + STALL_RESTART_MS),
      },
      expected: { state: touched(0, STALL_MS, MAX_RESTARTS + 1), action: "giveUp" },
    },
    {
      description: "given up: nothing more while it stays stalled",
      input: {
        state: touched(0, STALL_MS, MAX_RESTARTS + 1),
        input: tick(STALL_MS + STALL_RESTART_MS * 10),
      },
      expected: { state: touched(0, STALL_MS, MAX_RESTARTS + 1), action: null },
    },
    {
      description: "a late tick is not judged (the answer may wait in the queue)",
      input: { state: touched(0), input: tick(STALL_MS * 2, LATE_TICK_MS + 1) },
      expected: { state: touched(0), action: null },
    },
    {
      description: "a tick late by no more than the tolerance is judged",
      input: { state: touched(0), input: tick(STALL_MS, LATE_TICK_MS) },
      expected: { state: touched(0, STALL_MS), action: "stalled" },
    },
    {
      description: "heard after the touch: nothing waits",
      input: { state: touched(0), input: heard(10) },
      expected: { state: probeStart(T + 10), action: null },
    },
    {
      description: "heard after a stall: it reports again (its restarts still count)",
      input: { state: touched(0, STALL_MS, 2), input: heard(9000) },
      expected: { state: probeStart(T + 9000, 2), action: "recovered" },
    },
    {
      description: "any event counts as heard: no touch while changes come",
      input: { state: probeStart(T + 900), input: tick(PROBE_IDLE_MS) },
      expected: { state: probeStart(T + 900), action: null },
    },
  ];
  for (const { description, input, expected } of table) {
    await t.step(description, () => {
      assert.deepEqual(probeStep(input.state, input.input), expected);
    });
  }
});
