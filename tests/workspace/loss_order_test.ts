import assert from "node:assert/strict";
import {
  HELD_BYTES_MAX,
  HELD_PATHS_MAX,
  type LossAction,
  type LossInput,
  type LossState,
  nextLossState,
  NO_LOSS,
} from "../../lib/workspace/mod.ts";

/** A state with these counts, the rest as {@linkcode NO_LOSS}. */
const state = (over: Partial<LossState>): LossState => ({ ...NO_LOSS, ...over });
const event = (count: number, bytes = count * 10): LossInput => ({ type: "event", count, bytes });

Deno.test("nextLossState() holds what the watcher reports after a loss until a scan that began after it ends", async (t) => {
  const table: Array<{
    description: string;
    input: { state: LossState; input: LossInput };
    expected: { state: LossState; actions: LossAction[] };
  }> = [
    {
      description: "nothing lost: an event goes on to the debouncer",
      input: { state: NO_LOSS, input: event(3) },
      expected: { state: NO_LOSS, actions: ["pass"] },
    },
    {
      description: "a loss: what waits is dropped (the scan finds it, in order), a scan soon",
      input: { state: NO_LOSS, input: { type: "lost" } },
      expected: { state: state({ losses: 1 }), actions: ["dropPending", "dropHeld", "rescan"] },
    },
    {
      description: "a loss open: an event is held",
      input: { state: state({ losses: 1, held: 2, heldBytes: 20 }), input: event(3) },
      expected: { state: state({ losses: 1, held: 5, heldBytes: 50 }), actions: ["hold"] },
    },
    {
      description: "a loss open, the held paths at their most: still held",
      input: { state: state({ losses: 1, held: HELD_PATHS_MAX - 1 }), input: event(1, 0) },
      expected: { state: state({ losses: 1, held: HELD_PATHS_MAX }), actions: ["hold"] },
    },
    {
      description: "a loss open, one path too many: all left to a scan beginning now",
      input: { state: state({ losses: 1, held: HELD_PATHS_MAX }), input: event(1, 0) },
      expected: { state: state({ losses: 2 }), actions: ["dropHeld", "rescan"] },
    },
    {
      description: "a loss open, too many bytes of paths: all left to a scan beginning now",
      input: { state: state({ losses: 1, heldBytes: HELD_BYTES_MAX }), input: event(1, 1) },
      expected: { state: state({ losses: 2 }), actions: ["dropHeld", "rescan"] },
    },
    {
      description: "a second loss while a scan walks: held paths dropped for the next scan",
      input: { state: state({ losses: 1, held: 4, heldBytes: 40 }), input: { type: "lost" } },
      expected: { state: state({ losses: 2 }), actions: ["dropPending", "dropHeld", "rescan"] },
    },
    {
      description: "the scan that began after the loss ends: the held paths are captured",
      input: {
        state: state({ losses: 1, held: 4, heldBytes: 40 }),
        input: { type: "scanEnded", from: 1 },
      },
      expected: { state: state({ losses: 1, covered: 1 }), actions: ["release"] },
    },
    {
      description: "it ends with nothing held: nothing to do, and events pass again",
      input: { state: state({ losses: 1 }), input: { type: "scanEnded", from: 1 } },
      expected: { state: state({ losses: 1, covered: 1 }), actions: [] },
    },
    {
      description: "a scan that began before the loss ends: held paths left to the next scan",
      input: {
        state: state({ losses: 2, covered: 1, held: 4, heldBytes: 40 }),
        input: { type: "scanEnded", from: 1 },
      },
      expected: { state: state({ losses: 2, covered: 1 }), actions: ["dropHeld", "rescan"] },
    },
    {
      description: "a scan ends after a newer loss: held paths dropped for the next scan",
      input: {
        state: state({ losses: 3, covered: 1, held: 4, heldBytes: 40 }),
        input: { type: "scanEnded", from: 2 },
      },
      expected: { state: state({ losses: 3, covered: 2 }), actions: ["dropHeld", "rescan"] },
    },
    {
      description: "a scan ends after a newer loss, nothing held: the next scan still comes",
      input: { state: state({ losses: 3, covered: 1 }), input: { type: "scanEnded", from: 2 } },
      expected: { state: state({ losses: 3, covered: 2 }), actions: ["rescan"] },
    },
    {
      description: "an older scan ending never uncovers a loss",
      input: { state: state({ losses: 2, covered: 2 }), input: { type: "scanEnded", from: 1 } },
      expected: { state: state({ losses: 2, covered: 2 }), actions: [] },
    },
    {
      description: "the watcher stops: what it held is left to the scan resuming it",
      input: { state: state({ losses: 1, held: 4, heldBytes: 40 }), input: { type: "stopped" } },
      expected: { state: state({ losses: 1 }), actions: ["dropHeld"] },
    },
  ];
  for (const { description, input, expected } of table) {
    await t.step(description, () => {
      assert.deepEqual(nextLossState(input.state, input.input), expected);
    });
  }
});

Deno.test("nextLossState(): under losses all the time, nothing is held past the next scan", () => {
  // Scans back to back, a loss reported while each walks, events all along: every held
  // path is released or dropped (for the next scan, which began after it) when a scan ends.
  let current = NO_LOSS;
  const step = (input: LossInput) => {
    const { state, actions } = nextLossState(current, input);
    current = state;
    return actions;
  };
  step({ type: "lost" });
  for (let scan = 0; scan < 100; scan++) {
    const from = current.losses;
    for (let i = 0; i < 50; i++) assert.deepEqual(step(event(1)), ["hold"]);
    step({ type: "lost" });
    for (let i = 0; i < 50; i++) assert.deepEqual(step(event(1)), ["hold"]);
    assert.deepEqual(step({ type: "scanEnded", from }), ["dropHeld", "rescan"]);
    assert.equal(current.held, 0);
  }
  // The losses stop: the scan after the last one releases what was held.
  const from = current.losses;
  step(event(1));
  assert.deepEqual(step({ type: "scanEnded", from }), ["release"]);
  assert.deepEqual(step(event(1)), ["pass"]);
});
