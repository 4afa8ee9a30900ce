/**
 * The benchmarks' CPU time readings (bench/_lib/corpora.ts), on real processes: a child
 * that spins for a known time, counted once it ended and was waited for.
 */
import assert from "node:assert/strict";
import { endedChildrenCpuMs, processCpuMs } from "../../bench/_lib/mod.ts";

/** Runs a child that keeps a CPU busy for about `ms`, and waits for it. */
async function spinChild(ms: number): Promise<void> {
  const { success } = await new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `const end = performance.now() + ${ms}; let x = 0; while (performance.now() < end) x++;`,
    ],
    stdout: "null",
    stderr: "inherit",
  }).output();
  assert.ok(success);
}

Deno.test("endedChildrenCpuMs() counts a child's CPU time once it ended, and nothing else", async () => {
  const before = await endedChildrenCpuMs();
  const selfBefore = await processCpuMs(Deno.pid);
  await spinChild(400);
  const spent = await endedChildrenCpuMs() - before;
  // The child's own start (about 50 ms of CPU) comes on top of its 400 ms spin.
  assert.ok(spent >= 350, `${spent} ms counted for a child that spun 400 ms`);
  assert.ok(spent < 5000, `${spent} ms counted`);
  // This process only waited: its own time is not the child's.
  const selfSpent = await processCpuMs(Deno.pid) - selfBefore;
  assert.ok(selfSpent < spent / 2, `${selfSpent} ms of this process's own time`);
});

Deno.test("processCpuMs() is 0 for a process that is not there", async () => {
  assert.equal(await processCpuMs(2 ** 22 + 1), 0);
});
