/**
 * The benchmark's profile summary (bench/_lib/cpu_profile.ts): self and total time per
 * function from a V8 `.cpuprofile`, by a table of hand-made profiles, and on a profile a
 * real `deno run --cpu-prof` child writes.
 */
import assert from "node:assert/strict";
import {
  type CpuProfile,
  type ProfileWindow,
  readProfiles,
  summarizeProfiles,
} from "../../bench/_lib/cpu_profile.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

/** root → main → (hot, cold); idle beside main. Samples: main, hot, hot, cold, idle. */
function profile(): CpuProfile {
  const frame = (functionName: string, lineNumber = 0) => ({
    functionName,
    url: functionName.startsWith("(") ? "" : "file:///x.ts",
    lineNumber,
    columnNumber: 0,
  });
  return {
    nodes: [
      { id: 1, callFrame: frame("(root)"), children: [2, 5] },
      { id: 2, callFrame: frame("main", 9), children: [3, 4] },
      { id: 3, callFrame: frame("hot", 19) },
      { id: 4, callFrame: frame("cold", 29) },
      { id: 5, callFrame: frame("(idle)") },
    ],
    startTime: 0,
    endTime: 5000,
    samples: [2, 3, 3, 4, 5],
    // Each sample stands for the interval up to the next one: 1 ms each.
    timeDeltas: [0, 1000, 1000, 1000, 1000],
  };
}

Deno.test("summarizeProfiles() counts self and total time per function, within windows", async (t) => {
  const cases: {
    description: string;
    input: (readonly ProfileWindow[] | undefined)[];
    expected: { busyMs: number; idleMs: number; times: Record<string, [number, number]> };
  }[] = [
    {
      description: "the whole profile",
      input: [],
      expected: {
        busyMs: 4,
        idleMs: 1,
        times: {
          "main (file:///x.ts:10)": [1, 4],
          "hot (file:///x.ts:20)": [2, 2],
          "cold (file:///x.ts:30)": [1, 1],
        },
      },
    },
    {
      description: "a window over the two hot samples",
      input: [[{ fromMs: 1, toMs: 3 }]],
      expected: {
        busyMs: 2,
        idleMs: 0,
        times: { "main (file:///x.ts:10)": [0, 2], "hot (file:///x.ts:20)": [2, 2] },
      },
    },
    {
      description: "two windows",
      input: [[{ fromMs: 0, toMs: 1 }, { fromMs: 3, toMs: 5 }]],
      expected: {
        busyMs: 2,
        idleMs: 1,
        times: { "main (file:///x.ts:10)": [1, 2], "cold (file:///x.ts:30)": [1, 1] },
      },
    },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => {
      const summary = summarizeProfiles([profile()], input);
      assert.equal(summary.busyMs, expected.busyMs);
      assert.equal(summary.idleMs, expected.idleMs);
      const times = Object.fromEntries(
        summary.functions.map((f) => [f.name, [f.selfMs, f.totalMs]]),
      );
      assert.deepEqual(times, expected.times);
    });
  }
});

Deno.test("summarizeProfiles() finds the busy function of a real deno --cpu-prof run", () =>
  withTempDir(async (dir) => {
    const script = `${dir}/busy.ts`;
    await Deno.writeTextFile(
      script,
      `function spinHere(): number {
        let sum = 0;
        const end = performance.now() + 300;
        while (performance.now() < end) for (let i = 0; i < 1e4; i++) sum += Math.sqrt(i);
        return sum;
      }
      console.log(spinHere());
      `,
    );
    const { success } = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--cpu-prof", `--cpu-prof-dir=${dir}/profiles`, script],
      stdout: "null",
      stderr: "inherit",
    }).output();
    assert.ok(success);
    const profiles = await readProfiles(`${dir}/profiles`);
    assert.equal(profiles.length, 1);
    const summary = summarizeProfiles(profiles);
    const top = [...summary.functions].sort((a, b) => b.selfMs - a.selfMs)[0];
    assert.match(top?.name ?? "", /^spinHere \(.*busy\.ts:1\)$/);
    assert.ok(top!.selfMs > summary.busyMs / 2, `${top!.selfMs} of ${summary.busyMs} ms`);
  }));

Deno.test("summarizeProfiles() counts a worker's wait for the profiler as idle", () =>
  withTempDir(async (dir) => {
    const profiles = `${dir}/profiles`;
    await Deno.writeTextFile(
      `${dir}/echo.ts`,
      `self.onmessage = () => { self.postMessage("pong"); self.close(); };\n`,
    );
    // The worker's profile is written as the worker shuts down: the script waits until it
    // is there whole (10 s at most), or it could exit with it half written.
    await Deno.writeTextFile(
      `${dir}/main.ts`,
      `const worker = new Worker(new URL("./echo.ts", import.meta.url), { type: "module" });
      await new Promise((resolve) => { worker.onmessage = resolve; worker.postMessage("ping"); });
      for (let tries = 0; tries < 200; tries++) {
        const names = [...Deno.readDirSync(${JSON.stringify(profiles)})]
          .map((entry) => entry.name).filter((name) => name.includes("worker"));
        try {
          if (names.length === 1) {
            JSON.parse(Deno.readTextFileSync(${JSON.stringify(profiles)} + "/" + names[0]));
            break;
          }
        } catch { /* still being written */ }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      `,
    );
    await Deno.mkdir(profiles);
    const { success } = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        `--allow-read=${dir}`,
        "--cpu-prof",
        `--cpu-prof-dir=${profiles}`,
        `${dir}/main.ts`,
      ],
      stdout: "null",
      stderr: "inherit",
    }).output();
    assert.ok(success);
    const read = await readProfiles(profiles);
    assert.equal(read.length, 2, "the main thread's profile and the worker's");
    const summary = summarizeProfiles(read);
    // Deno holds a worker about 500 ms at its start under --cpu-prof; neither thread
    // does more than a few tens of milliseconds of work, even on a loaded machine.
    assert.ok(summary.busyMs < 450, `${summary.busyMs.toFixed(0)} ms counted as busy`);
    assert.ok(!summary.functions.some((f) => f.name.startsWith("op_worker_maybe_wait")));
  }));
