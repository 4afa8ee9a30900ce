import { ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { runChronicle, type RunResult, spawnChronicle } from "../_helpers/processes.ts";
import { controlJson } from "../_helpers/control_socket.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";

function cli(cwd: string, ...args: string[]): Promise<RunResult> {
  return runChronicle(args, { cwd });
}

function shown(run: RunResult): string {
  return `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`;
}

Deno.test("status for people and --json, then stop ends the running Chronicle cleanly", async (t) => {
  await withTempDir(async (dir) => {
    const root = join(dir, "ws");
    await Deno.mkdir(root);
    await Deno.writeTextFile(join(root, "a.txt"), "hello");
    const child = spawnChronicle([root, "--replication"]);
    let code: number | undefined;
    try {
      const data = join(root, ".chronicle");
      await waitFor("ready", async () => (await controlJson(data, "/ready")).status === 200);

      await t.step(
        "status: labelled lines, pid, uptime, local start time, no epoch ms",
        async () => {
          const run = await cli(root, "status");
          strictEqual(run.code, 0, shown(run));
          ok(/^workspace:\s+\S/m.test(run.stdout), shown(run));
          ok(
            /^chronicle:\s+running, pid \d+, up \d+s \(since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\)$/m
              .test(run.stdout),
            shown(run),
          );
          ok(/^role:\s+master$/m.test(run.stdout), shown(run));
          ok(/^sequence:\s+\d+$/m.test(run.stdout), shown(run));
          ok(/^replicas:\s+none yet$/m.test(run.stdout), shown(run));
          ok(!run.stdout.includes("{"), "no JSON for people");
          ok(!/\b1\d{12}\b/.test(run.stdout), "no epoch milliseconds");
        },
      );

      await t.step("status --json: snake_case keys only, times UTC ISO 8601", async () => {
        const run = await cli(root, "status", "--json");
        strictEqual(run.code, 0, shown(run));
        const status = JSON.parse(run.stdout);
        strictEqual(status.running, true);
        ok(Number.isSafeInteger(status.pid) && status.pid > 0, run.stdout);
        ok(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(status.started_at), run.stdout);
        const keys: string[] = [];
        const walk = (value: unknown) => {
          if (Array.isArray(value)) value.forEach(walk);
          else if (value !== null && typeof value === "object") {
            for (const [key, item] of Object.entries(value)) keys.push(key), walk(item);
          }
        };
        walk(status);
        for (const key of keys) ok(/^[a-z0-9_]+$/.test(key), `"${key}" is snake_case`);
      });

      await t.step("config -C asks the running process for its own configuration", async () => {
        const run = await cli(dir, "config", "-C", root, "--json");
        strictEqual(run.code, 0, shown(run));
        ok(
          run.stderr.includes(`the configuration of the Chronicle running on ${root}`),
          shown(run),
        );
        // Started with --replication, which this command was not given: the process's view.
        const described = JSON.parse(run.stdout);
        strictEqual(described.replication.value, true, run.stdout);
        strictEqual(described.replication.name, "--replication", run.stdout);
      });

      await t.step("stop: a clean shutdown, the process exits 0", async () => {
        const run = await cli(root, "stop");
        strictEqual(run.code, 0, shown(run));
        ok(/^stopped Chronicle on \S+ \(pid \d+\)$/m.test(run.stdout), shown(run));
        code = (await child.process.status).code;
        strictEqual(code, 0, child.output());
      });

      await t.step("with nothing running: stop says so, status reads the store", async () => {
        const stop = await cli(root, "stop");
        strictEqual(stop.code, 0, shown(stop));
        ok(stop.stdout.includes("No Chronicle is running on"), shown(stop));
        const status = await cli(root, "status");
        strictEqual(status.code, 0, shown(status));
        ok(/^chronicle:\s+not running$/m.test(status.stdout), shown(status));
        ok(/^files:\s+1 \(5 bytes\), 1 iterations$/m.test(status.stdout), shown(status));
      });
    } finally {
      if (code === undefined) await child.stop();
    }
  }, "chronicle-status-");
});
