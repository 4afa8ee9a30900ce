/** `LinkSize`: how large a piece of content one message carries on a link that drops (table). */
import { assertEquals } from "./_assert.ts";
import { RANGE_MAX_BYTES, RANGE_MIN_BYTES } from "../../lib/replication/content_range.ts";
import { LinkSize } from "../../lib/replication/link_size.ts";

Deno.test("LinkSize drops with what connections lost, grows with what one carried (table)", () => {
  type Step = { ended: [number | null, boolean] } | { carried: number; saturated?: boolean };
  const table: { name: string; steps: Step[]; bytes: number }[] = [
    { name: "untouched: the largest", steps: [], bytes: RANGE_MAX_BYTES },
    {
      name: "nothing lost to learn from",
      steps: [{ ended: [null, true] }],
      bytes: RANGE_MAX_BYTES,
    },
    { name: "half the largest lost", steps: [{ ended: [300_000, false] }], bytes: 150_000 },
    {
      name: "its own size lost: half itself too",
      steps: [{ ended: [300_000, false] }, { ended: [900_000, true] }],
      bytes: 75_000,
    },
    { name: "never under the least", steps: [{ ended: [100, false] }], bytes: RANGE_MIN_BYTES },
    {
      name: "doubles after four of it on one connection",
      steps: [{ ended: [200_000, false] }, { carried: 399_999 }, { carried: 1 }],
      bytes: 200_000,
    },
    {
      name: "what an ended connection carried does not count",
      steps: [{ ended: [200_000, false] }, { carried: 399_999 }, { ended: [null, false] }, {
        carried: 1,
      }],
      bytes: 100_000,
    },
    {
      name: "at the largest, four of it say the link carries it",
      steps: [{ carried: 4 * RANGE_MAX_BYTES - 1, saturated: false }, {
        carried: 1,
        saturated: true,
      }],
      bytes: RANGE_MAX_BYTES,
    },
  ];
  for (const { name, steps, bytes } of table) {
    const size = new LinkSize();
    for (const step of steps) {
      if ("ended" in step) size.connectionEnded(...step.ended);
      else {
        const saturated = size.carried(step.carried);
        if (step.saturated !== undefined) assertEquals(saturated, step.saturated, name);
      }
    }
    assertEquals(size.bytes, bytes, name);
  }
});
