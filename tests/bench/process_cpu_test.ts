/**
 * The benchmarks' CPU time readings (bench/_lib/corpora.ts), on real processes: a child
 * that uses a known CPU time, counted once it ended and was waited for.
 */
import assert from "node:assert/strict";
import { endedChildrenCpuMs, processCpuMs } from "../../bench/_lib/mod.ts";

/**
 * Runs a child that uses `ms` of CPU time (its own count, whatever else the machine runs),
 * and waits for it.
 */
async function spinChild(ms: number): Promise<void> {
  const { success } = await new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `import process from "node:process";
      const used = () => { const { user, system } = process.cpuUsage(); return (user + system) / 1000; };
      while (used() < ${ms});`,
    ],
    stdout: "null",
    stderr: "inherit",
  }).output();
  assert.ok(success);
}

Deno.test("endedChildrenCpuMs() counts a child's CPU time once it ended and was waited for", async () => {
  const before = await endedChildrenCpuMs();
  await spinChild(400);
  // At least the child's own count; more when other tests' children ended meanwhile.
  const spent = await endedChildrenCpuMs() - before;
  assert.ok(spent >= 390, `${spent} ms counted for a child that used 400 ms`);
});

Deno.test("processCpuMs() is 0 for a process that is not there", async () => {
  assert.equal(await processCpuMs(2 ** 22 + 1), 0);
});
