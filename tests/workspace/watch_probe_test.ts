import assert from "node:assert/strict";
import {
  LATE_TICK_MS,
  PROBE_IDLE_MS,
  type ProbeAction,
  type ProbeInput,
  probeStart,
  type ProbeState,
  probeStep,
  STALL_MS,
} from "../../lib/workspace/watch_probe.ts";

const T = 1_000_000;
const tick = (at: number, lateMs = 0): ProbeInput => ({ type: "tick", nowMs: T + at, lateMs });
const heard = (at: number): ProbeInput => ({ type: "heard", nowMs: T + at });
const touched = (at: number, stalled = false): ProbeState => ({
  heardAt: T,
  touchedAt: T + at,
  stalled,
});

Deno.test("probeStep() touches a quiet watcher and reports it stalled once when it stays silent", async (t) => {
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
      expected: { state: touched(0, true), action: "stalled" },
    },
    {
      description: "stalled already: said once, not at every tick",
      input: { state: touched(0, true), input: tick(STALL_MS * 10) },
      expected: { state: touched(0, true), action: null },
    },
    {
      description: "a late tick is not judged (the answer may wait in the queue)",
      input: { state: touched(0), input: tick(STALL_MS * 2, LATE_TICK_MS + 1) },
      expected: { state: touched(0), action: null },
    },
    {
      description: "a tick late by no more than the tolerance is judged",
      input: { state: touched(0), input: tick(STALL_MS, LATE_TICK_MS) },
      expected: { state: touched(0, true), action: "stalled" },
    },
    {
      description: "heard after the touch: nothing waits",
      input: { state: touched(0), input: heard(10) },
      expected: { state: probeStart(T + 10), action: null },
    },
    {
      description: "heard after a stall: it reports again",
      input: { state: touched(0, true), input: heard(9000) },
      expected: { state: probeStart(T + 9000), action: "recovered" },
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
