import { assertEquals } from "./_assert.ts";
import {
  MASS_REMOVAL_HOLD_MAX_MS,
  MASS_REMOVAL_QUIET_MS,
  MASS_REMOVALS,
  REMOVAL_HOLD_MAX_MS,
  REMOVAL_QUIET_MS,
  removalWait,
} from "../../lib/replication/removal_hold.ts";

Deno.test("removalWait() holds removals while they keep coming, for a while at most, and never sends them once the folder is gone", () => {
  const now = 50_000;
  const pending = (oldestAgo: number, newestAgo: number, count = 10) => ({
    oldestMs: now - oldestAgo,
    newestMs: now - newestAgo,
    count,
  });
  const table: [string, ReturnType<typeof pending> | null, boolean, number | null][] = [
    ["no removal waiting: send", null, false, 0],
    [
      "the newest just journaled: wait the whole quiet time",
      pending(0, 0),
      false,
      REMOVAL_QUIET_MS,
    ],
    ["the newest 400 ms ago: wait the rest", pending(900, 400), false, REMOVAL_QUIET_MS - 400],
    ["quiet long enough: send", pending(5_000, REMOVAL_QUIET_MS), false, 0],
    [
      "removals that keep coming wait until the oldest was held the longest",
      pending(REMOVAL_HOLD_MAX_MS - 300, 0),
      false,
      300,
    ],
    ["held the longest: send, though more keep coming", pending(REMOVAL_HOLD_MAX_MS, 0), false, 0],
    ["old ones from before a restart: send", pending(3_600_000, 3_600_000), false, 0],
    [
      "one short of a mass removal, held the longest: send",
      pending(REMOVAL_HOLD_MAX_MS, 0, MASS_REMOVALS - 1),
      false,
      0,
    ],
    [
      "a mass removal (a long rm -rf) held the longest of others: still waits",
      pending(REMOVAL_HOLD_MAX_MS, 0, MASS_REMOVALS),
      false,
      MASS_REMOVAL_QUIET_MS,
    ],
    [
      "a mass removal quiet for the usual time: waits for its longer quiet",
      pending(5_000, REMOVAL_QUIET_MS, MASS_REMOVALS),
      false,
      MASS_REMOVAL_QUIET_MS - REMOVAL_QUIET_MS,
    ],
    [
      "a mass removal quiet long enough: send",
      pending(5_000, MASS_REMOVAL_QUIET_MS, MASS_REMOVALS),
      false,
      0,
    ],
    [
      "a mass removal that keeps coming: until held the longest a mass removal is",
      pending(MASS_REMOVAL_HOLD_MAX_MS - 300, 0, 50_000),
      false,
      300,
    ],
    [
      "a mass removal held the longest: send, though more keep coming",
      pending(MASS_REMOVAL_HOLD_MAX_MS, 0, 50_000),
      false,
      0,
    ],
    ["the folder is gone: never", pending(3_600_000, 3_600_000), true, null],
    ["a mass removal, the folder gone: never", pending(5_000, 0, 50_000), true, null],
    ["gone, nothing waiting: never", null, true, null],
  ];
  for (const [description, removals, gone, expected] of table) {
    assertEquals(removalWait(removals, now, gone), expected, description);
  }
});
