/** What a replica keeps across a cut connection (PROTOCOL.md §4), tested by tables. */
import { assertEquals } from "./_assert.ts";
import { carriedNotifications, splitCutBatch } from "../../lib/replication/mod.ts";

const seqs = (...ns: number[]) => ns.map((n) => ({ sequence: BigInt(n) }));
const numbers = (msgs: { sequence: bigint }[]) => msgs.map((m) => Number(m.sequence));

Deno.test("splitCutBatch() applies what came before the first lost fetch and carries the rest", async (t) => {
  const table: {
    description: string;
    input: { batch: number[]; firstLost: number; applied: number };
    expected: { done: number[]; carry: number[]; applied: number };
  }[] = [
    {
      description: "lost in the middle",
      input: { batch: [4, 5, 6, 7], firstLost: 6, applied: 3 },
      expected: { done: [4, 5], carry: [6, 7], applied: 5 },
    },
    {
      description: "lost at the first: nothing applied, the position stays",
      input: { batch: [4, 5, 6], firstLost: 4, applied: 3 },
      expected: { done: [], carry: [4, 5, 6], applied: 3 },
    },
    {
      description: "lost at the last",
      input: { batch: [4, 5, 6], firstLost: 6, applied: 3 },
      expected: { done: [4, 5], carry: [6], applied: 5 },
    },
    {
      description: "gaps in the replay (superseded iterations skipped)",
      input: { batch: [10, 14, 20, 31], firstLost: 20, applied: 9 },
      expected: { done: [10, 14], carry: [20, 31], applied: 14 },
    },
    {
      description: "the position never goes back",
      input: { batch: [4, 5], firstLost: 5, applied: 8 },
      expected: { done: [4], carry: [5], applied: 8 },
    },
  ];
  for (const { description, input, expected } of table) {
    await t.step(description, () => {
      const cut = splitCutBatch(seqs(...input.batch), input.firstLost, input.applied);
      assertEquals(
        { done: numbers(cut.done), carry: numbers(cut.carry), applied: cut.applied },
        expected,
      );
    });
  }
});

Deno.test("carriedNotifications() keeps an ordered prefix after the applied position", async (t) => {
  const table: {
    description: string;
    input: { received: number[]; applied: number; max: number };
    expected: number[];
  }[] = [
    {
      description: "all after the position",
      input: { received: [5, 6, 7], applied: 4, max: 10 },
      expected: [5, 6, 7],
    },
    {
      description: "already applied ones dropped",
      input: { received: [3, 4, 5, 6], applied: 4, max: 10 },
      expected: [5, 6],
    },
    {
      description: "over the bound: a prefix, so the catch-up after it skips nothing",
      input: { received: [5, 6, 7, 8], applied: 4, max: 2 },
      expected: [5, 6],
    },
    { description: "nothing received", input: { received: [], applied: 4, max: 10 }, expected: [] },
    {
      description: "everything applied meanwhile",
      input: { received: [3, 4], applied: 9, max: 10 },
      expected: [],
    },
  ];
  for (const { description, input, expected } of table) {
    await t.step(description, () => {
      const kept = carriedNotifications(seqs(...input.received), input.applied, input.max);
      assertEquals(numbers(kept), expected);
    });
  }
});
