import { ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { controlJson } from "../_helpers/control_socket.ts";
import { Store } from "../../lib/store/mod.ts";
import { Workspace } from "../../lib/workspace/mod.ts";
import { type Child, PROJECT_ROOT, runChronicle, spawnChronicle } from "../_helpers/processes.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

Deno.test("a listener whose address is taken names its option", async (t) => {
  // Held open by this test for the whole run: the address is certainly in use.
  using taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const address = `127.0.0.1:${(taken.addr as Deno.NetAddr).port}`;
  for (const flag of ["--http", "--ws-listen"]) {
    await t.step(flag, async () => {
      await withTempDir(async (root) => {
        const run = await runChronicle([root, flag, address]);
        strictEqual(run.code, 1, run.stderr);
        const last = run.stderr.trim().split("\n").at(-1)!;
        strictEqual(
          last,
          `error: Cannot listen on ${flag} ${address}: another process listens there; stop it or choose another port`,
        );
        ok(!run.stderr.includes("os error 98"), run.stderr);
      }, "chronicle-listen-");
    });
  }
});

Deno.test("sync status and sync --wait say what is true when there is no master to follow", async (t) => {
  await withTempDir(async (dir) => {
    const masterRoot = join(dir, "master");
    const replicaRoot = join(dir, "replica");
    await Deno.mkdir(masterRoot);
    await Deno.mkdir(replicaRoot);
    await Deno.writeTextFile(join(masterRoot, "a.txt"), "a");
    const master = spawnChronicle([masterRoot, "--replication"]);
    const socket = join(masterRoot, ".chronicle", "chronicle.sock");
    let replica: Child | undefined;
    let masterStopped = false;
    try {
      await waitFor(
        "master ready",
        async () => (await controlJson(join(masterRoot, ".chronicle"), "/ready")).status === 200,
      );
      await t.step("sync status on a master lists its replicas, no undefined", async () => {
        const run = await runChronicle(["sync", "status"], { cwd: masterRoot });
        strictEqual(run.code, 0, run.stderr);
        ok(run.stdout.startsWith("role: master\nsequence: 1\n"), run.stdout);
        ok(!run.stdout.includes("undefined"), run.stdout);
      });
      replica = spawnChronicle([replicaRoot, "--connect", socket]);
      await waitFor("replica caught up", async () => {
        const run = await runChronicle(["sync", "status"], { cwd: replicaRoot });
        return run.code === 0 && run.stdout.includes("applied 1 of 1");
      });
      await master.stop();
      masterStopped = true;
      await t.step(
        "sync --wait with the master gone names that, not 'applied 1 of 1'",
        async () => {
          const run = await runChronicle(["sync", "--wait", "--timeout", "1"], {
            cwd: replicaRoot,
          });
          strictEqual(run.code, 1, run.stderr);
          ok(
            run.stderr.startsWith(
              `error: Not in sync within 1 s: no connection to the master "unix:${socket}"`,
            ),
            run.stderr,
          );
          ok(run.stderr.includes("Is the master running?"), run.stderr);
        },
      );
    } finally {
      await replica?.stop();
      if (!masterStopped) await master.stop();
    }
  }, "chronicle-sync-msg-");
});

Deno.test("sync without an action it knows says what was wrong before its usage", async () => {
  const cases: [string[], string][] = [
    [["sync", "wait"], "Waiting is a flag: chronicle sync --wait"],
    [["sync", "stauts"], 'Unknown sync action "stauts": did you mean "status"?'],
    [["sync", "frobnicate"], 'Unknown sync action "frobnicate"'],
    [["sync"], "chronicle sync needs an action (start, stop, status, resolve) or --wait"],
    [
      ["sync", "-C", "."],
      "chronicle sync needs an action (start, stop, status, resolve) or --wait",
    ],
  ];
  for (const [args, first] of cases) {
    const run = await runChronicle(args);
    strictEqual(run.code, 2, run.stderr);
    const lines = run.stderr.trim().split("\n");
    strictEqual(lines[0], first, args.join(" "));
    ok(lines.includes("Usage:"), run.stderr);
  }
});

Deno.test("sync status where nothing replicates says so", async () => {
  await withTempDir(async (root) => {
    const child = spawnChronicle([root]);
    try {
      await waitFor(
        "ready",
        async () => (await controlJson(join(root, ".chronicle"), "/ready")).status === 200,
      );
      const run = await runChronicle(["sync", "status"], { cwd: root });
      strictEqual(run.code, 0, run.stderr);
      strictEqual(
        run.stdout,
        "role: standalone\nno replication here: chronicle status shows this workspace\n",
      );
    } finally {
      await child.stop();
    }
  }, "chronicle-sync-msg-");
});

Deno.test("a system path Deno refuses is named, without Deno's advice to use --allow-all", async () => {
  await withTempDir(async (root) => {
    await Deno.mkdir(join(root, ".chronicle"));
    Store.open(join(root, ".chronicle", "chronicle.db")).close();
    // Through ./chronicle: the binaries' permissions, not the tests' -A.
    const { code, stderr } = await new Deno.Command(join(PROJECT_ROOT, "chronicle"), {
      args: ["checkpoint", "-o", "/proc/1/nope", "-C", root],
      cwd: root,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(stderr);
    strictEqual(code, 1, text);
    strictEqual(
      text.trim(),
      'error: Chronicle has no permission to use "/proc/1/nope" (a system path such as /proc, /sys or /dev): if you gave that path, choose another folder',
    );
  }, "chronicle-notcapable-");
});

Deno.test("output cut short by its reader (chronicle ls | head) ends quietly", async () => {
  await withTempDir(async (root) => {
    for (let i = 0; i < 3000; i++) await Deno.writeTextFile(join(root, `file-${i}.txt`), "x");
    const workspace = await Workspace.open({ root });
    await workspace.scan();
    await workspace.close();
    // More than a pipe holds: the reader goes away while it is still writing.
    const child = new Deno.Command(join(PROJECT_ROOT, "chronicle"), {
      args: ["ls", "-C", root],
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const reader = child.stdout.getReader();
    await reader.read();
    await reader.cancel();
    const [status, stderr] = await Promise.all([child.status, new Response(child.stderr).text()]);
    strictEqual(stderr, "");
    strictEqual(status.code, 0);
  }, "chronicle-broken-pipe-");
});
