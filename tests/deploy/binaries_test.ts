/**
 * The binaries end to end: `bin/agent.ts` and `bin/sandbox.ts` run under `deno run` with
 * exactly the permissions `deno task compile:*` grants, so a permission the code needs
 * but the binaries lack fails here.
 */
import { deepStrictEqual as assertEquals, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { healthCommand } from "../../lib/cli/health_command.ts";
import { parsePrometheusText } from "../metrics/_prometheus_text.ts";
import { binaryCommand, runBinary, Running } from "./_deploy.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import { controlFetch } from "../_helpers/control_socket.ts";
import { putAtomic, withTempDir } from "../_helpers/temp_dir.ts";
import { sha256OfText } from "../_helpers/text_hash.ts";

const decoder = new TextDecoder();

/** A request to the agent whose data folder is `dataDir`, over its control socket. */
function control(dataDir: string, path: string): Promise<Response> {
  return controlFetch(dataDir, path);
}

async function waitReady(dataDir: string, running: Running): Promise<void> {
  await waitFor(
    `ready (stderr so far: ${running.stderr})`,
    async () => (await control(dataDir, "/ready")).status === 200,
  );
}

Deno.test("the agent binary prints its version with the binaries' permissions", async () => {
  const { code, stdout } = await runBinary("agent", ["--version"]);
  strictEqual(code, 0);
  ok(/^chronicle \d+\.\d+\.\d+/.test(stdout), stdout);
});

Deno.test("the agent binary serves health, readiness and metrics, logs JSON, and stops on SIGTERM", async () => {
  await withTempDir(async (dir) => {
    const workspace = join(dir, "workspace");
    const data = join(dir, "data");
    await Deno.mkdir(workspace);
    await Deno.writeTextFile(join(workspace, "hello.txt"), "hello");
    const agent = new Running(
      binaryCommand("agent", [workspace, "--log-format", "json"], {
        CHRONICLE_DATA_DIR: data,
        CHRONICLE_TOKEN: "t0ken",
      }),
    );
    try {
      await waitReady(data, agent);
      const health = await (await control(data, "/health")).json();
      strictEqual(health.status, "ok");
      strictEqual(health.role, "master", "the agent binary is a master by default");
      ok(health.sequence >= 1);

      strictEqual(await healthCommand(["--data-dir", data, "--quiet"], { env: {} }), 0);
      strictEqual(await healthCommand(["--data-dir", data, "--ready", "--quiet"], { env: {} }), 0);

      const metrics = await control(data, "/metrics");
      strictEqual(metrics.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
      const families = parsePrometheusText(await metrics.text());
      for (
        const name of ["chronicle_iterations_total", "chronicle_sequence", "chronicle_bytes_stored"]
      ) {
        ok(families.has(name), `${name} is exposed`);
      }
      ok(families.get("chronicle_sequence")!.samples[0]!.value >= 1);
      // Run with the binaries' V8 flags (--expose-gc), the agent keeps its heap small.
      strictEqual(families.get("chronicle_heap_keeper_running")?.samples[0]?.value, 1);
    } finally {
      strictEqual(await agent.stop(), 0, agent.stderr);
    }
    const lines = agent.stderr.trim().split("\n");
    ok(lines.length >= 2, agent.stderr);
    for (const line of lines) {
      const entry = JSON.parse(line);
      ok(
        typeof entry.time === "string" && typeof entry.level === "string" &&
          typeof entry.msg === "string",
        line,
      );
    }
    ok(lines.some((line) => JSON.parse(line).msg === "shutting down"));
  }, "chronicle-agent-bin-");
});

Deno.test("SIGTERM while files pour in loses nothing: a restart holds every file", async () => {
  await withTempDir(async (dir) => {
    const workspace = join(dir, "workspace");
    const data = join(dir, "data");
    await Deno.mkdir(join(workspace, "burst"), { recursive: true });
    const env = { CHRONICLE_DATA_DIR: data };
    const FILES = 300;
    const first = new Running(binaryCommand("agent", [workspace], env));
    await waitReady(data, first);
    let stopping: Promise<number> | undefined;
    for (let n = 0; n < FILES; n++) {
      await Deno.writeTextFile(join(workspace, "burst", `${n}.txt`), `content ${n}\n`);
      if (n === FILES / 2) stopping = first.stop();
    }
    strictEqual(await stopping, 0, first.stderr);
    ok(first.stderr.includes("shutting down"), first.stderr);

    const second = new Running(binaryCommand("agent", [workspace], env));
    try {
      await waitReady(data, second);
    } finally {
      strictEqual(await second.stop(), 0, second.stderr);
    }
    const { code, stdout, stderr } = await runBinary("agent", [
      "ls",
      "burst",
      "--json",
      "--data-dir",
      data,
    ]);
    strictEqual(code, 0, stderr);
    const entries = JSON.parse(stdout) as { path: string; hash: string }[];
    // The folder itself is recorded too (an entry of its own path), beside its files.
    const listed = entries.filter((entry) => entry.path !== "burst");
    strictEqual(entries.length - listed.length, 1, "the folder burst is recorded");
    strictEqual(listed.length, FILES);
    const byPath = new Map(listed.map((entry) => [entry.path, entry.hash]));
    for (let n = 0; n < FILES; n++) {
      strictEqual(byPath.get(`burst/${n}.txt`), sha256OfText(`content ${n}\n`), `burst/${n}.txt`);
    }
  }, "chronicle-agent-sigterm-");
});

Deno.test("after kill -9 with temp files left in its store, the agent binary starts again and sweeps the stale ones", async () => {
  await withTempDir(async (dir) => {
    const workspace = join(dir, "workspace");
    const data = join(dir, "data");
    await Deno.mkdir(join(workspace, "burst"), { recursive: true });
    const env = { CHRONICLE_DATA_DIR: data };
    const first = new Running(binaryCommand("agent", [workspace], env));
    await waitReady(data, first);
    for (let n = 0; n < 50; n++) {
      await Deno.writeTextFile(join(workspace, "burst", `${n}.txt`), `content ${n}\n`.repeat(n));
    }
    first.child.kill("SIGKILL");
    await first.child.status;
    await first.stop().catch(() => {}); // its pipes drained
    // Temp files as a crash leaves them: one written an hour and more ago, one just now
    // (another process may still be writing it), both of processes that are gone.
    const tmp = join(data, "cas", "tmp");
    await Deno.mkdir(tmp, { recursive: true });
    const old = join(tmp, "999999999-stale.tmp");
    const fresh = join(tmp, "999999999-fresh.tmp");
    // As the killed agent named its own (it held the data folder's lock): its next start
    // removes it at once, however recent (the format: HOLDER_TEMP_PREFIX in lib/cas).
    const tag = sha256OfText(data).slice(0, 8);
    const killed = `held-${tag}-999999999-killed.tmp`;
    await Deno.writeTextFile(old, "half a write");
    await Deno.writeTextFile(fresh, "half a write");
    await Deno.writeTextFile(join(tmp, killed), "half a write");
    const hoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
    await Deno.utime(old, hoursAgo, hoursAgo);
    // Before, under the binaries' permissions, reading /proc to ask whether the writer
    // ran failed, and every start failed until the temp files were removed by hand.
    const second = new Running(binaryCommand("agent", [workspace], env));
    try {
      await waitReady(data, second);
      await waitFor("every file recorded after the restart", async () => {
        const listed = await (await control(data, "/files?path=burst")).json();
        return listed.entries.length === 50;
      });
    } finally {
      strictEqual(await second.stop(), 0, second.stderr);
    }
    const left = [];
    for await (const entry of Deno.readDir(tmp)) left.push(entry.name);
    ok(!left.includes("999999999-stale.tmp"), `stale temp swept: ${left.join(" ")}`);
    ok(!left.includes(killed), `the killed agent's own temp swept: ${left.join(" ")}`);
    ok(second.stderr.includes("removed the temp files an earlier run left"), second.stderr);
    ok(
      left.includes("999999999-fresh.tmp"),
      `a recent temp of another process kept: ${left.join(" ")}`,
    );
  }, "chronicle-agent-kill-");
});

Deno.test("the sandbox binary refuses to start without its agent", async () => {
  const { code, stderr } = await runBinary("sandbox", ["--data-dir", "/nonexistent/data"]);
  strictEqual(code, 2, stderr);
  ok(stderr.includes("The sandbox needs its agent"), stderr);
});

Deno.test("the binaries reject a bad configuration with exit status 2 naming it", async () => {
  const { code, stderr } = await runBinary("agent", ["/tmp/x", "--ws-listen", "0.0.0.0:3002"]);
  strictEqual(code, 2);
  ok(stderr.includes('Refusing to listen on "0.0.0.0:3002"'), stderr);
  const bad = await runBinary("sandbox", ["--ws-connect", "http://agent:3002"]);
  strictEqual(bad.code, 2);
  ok(bad.stderr.includes('Invalid value "http://agent:3002" for --ws-connect'), bad.stderr);
});

Deno.test({
  name: "health, checkpoint and rehydrate work through the agent binary",
  fn: () =>
    withTempDir(async (dir) => {
      const workspace = join(dir, "workspace");
      const data = join(dir, "data");
      await Deno.mkdir(join(workspace, "src"), { recursive: true });
      await Deno.writeTextFile(join(workspace, "src/a.txt"), "one");
      const agent = new Running(binaryCommand("agent", [workspace], { CHRONICLE_DATA_DIR: data }));
      try {
        await waitReady(data, agent);
        const probe = await runBinary("agent", ["health", "--data-dir", data]);
        strictEqual(probe.code, 0, probe.stderr);
        strictEqual(JSON.parse(probe.stdout).status, "ok");
        // In one step: the empty file of a truncate, captured alone, would be an iteration
        // of its own, and the history's iterations are counted.
        await putAtomic(workspace, "src/a.txt", "two");
        await waitFor("the second iteration", async () => {
          const history = await runBinary("agent", [
            "history",
            "src/a.txt",
            "--json",
            "--data-dir",
            data,
          ]);
          return history.code === 0 && JSON.parse(history.stdout).length === 2;
        });
        const made = await runBinary("agent", [
          "checkpoint",
          "--data-dir",
          data,
          "--output",
          join(dir, "ckpt"),
          "--with-objects",
          "--json",
        ]);
        strictEqual(made.code, 0, made.stderr);
        strictEqual(JSON.parse(made.stdout).with_objects, true);
      } finally {
        strictEqual(await agent.stop(), 0, agent.stderr);
      }
      const down = await runBinary("agent", ["health", "--data-dir", data, "--timeout-ms", "2000"]);
      strictEqual(down.code, 1, "no Chronicle running is unhealthy");
      ok(down.stderr.includes("No Chronicle answers"), down.stderr);
      const restored = join(dir, "restored");
      const back = await runBinary("agent", [
        "rehydrate",
        "--from",
        join(dir, "ckpt"),
        "-C",
        restored,
        "--data-dir",
        join(dir, "restored-data"),
      ]);
      strictEqual(back.code, 0, back.stderr);
      strictEqual(await Deno.readTextFile(join(restored, "src/a.txt")), "two");
      const history = await runBinary("agent", [
        "history",
        "src/a.txt",
        "--json",
        "--data-dir",
        join(dir, "restored-data"),
      ]);
      strictEqual(history.code, 0, history.stderr);
      assertEquals(
        JSON.parse(history.stdout).map((entry: { iteration: number }) => entry.iteration),
        [1, 2],
      );
    }, "chronicle-agent-ops-"),
});

Deno.test("an unknown agent option is a usage error", async () => {
  const { code, stderr } = await runBinary("agent", ["--frobnicate"]);
  strictEqual(code, 2);
  ok(
    decoder.decode(new TextEncoder().encode(stderr)).includes('Unknown option "--frobnicate"'),
    stderr,
  );
});
