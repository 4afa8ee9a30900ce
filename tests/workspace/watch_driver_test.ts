import assert from "node:assert/strict";
import { SerialQueue } from "../../lib/concurrency/mod.ts";
import { DirectionalFilter } from "../../lib/filter/mod.ts";
import { nextRescanMs, WatchDriver } from "../../lib/workspace/_watch_driver.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";

Deno.test("WatchDriver: a resume whose scan fails still arms the safety rescans again", () =>
  withTempDir(async (root) => {
    let scans = 0;
    let closed = false;
    const driver = new WatchDriver({
      root,
      dataDirInside: undefined,
      filter: DirectionalFilter.create(),
      queue: new SerialQueue(),
      capture: () => Promise.resolve(),
      scan: () => {
        scans++;
        return scans === 1 ? Promise.reject(new Error("the disk went away")) : Promise.resolve();
      },
      closed: () => closed,
    });
    try {
      await driver.watch({ debounceMs: 20, rescanMs: 50, scanAtStart: false });
      await driver.suspend();
      await assert.rejects(driver.resume(), /the disk went away/);
      await waitFor("a safety rescan after the failed resume", () => scans >= 2);
    } finally {
      closed = true;
      await driver.close();
    }
  }));

Deno.test("nextRescanMs() spaces safety rescans by thirty scans, and rescans soon after a loss", async (t) => {
  const table = [
    { description: "a small tree: the least interval", scanMs: 20, lost: false, expected: 10_000 },
    { description: "a large tree: thirty scans", scanMs: 1_000, lost: false, expected: 30_000 },
    { description: "lost while it walked: soon", scanMs: 1_000, lost: true, expected: 50 },
  ];
  for (const { description, scanMs, lost, expected } of table) {
    await t.step(description, () => {
      assert.equal(
        nextRescanMs({ rescanMs: 10_000, debounceMs: 50, scanMs, lostMeanwhile: lost }),
        expected,
      );
    });
  }
});
