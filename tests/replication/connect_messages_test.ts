import { ok } from "node:assert/strict";
import { join } from "node:path";
import { controlJson } from "../_helpers/control_socket.ts";
import { type Child, freePort, spawnChronicle } from "../_helpers/processes.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";

/** Starts a master on `dir`/master with `args`, ready; runs `fn`; stops every child. */
async function withMaster(
  args: string[],
  fn: (dir: string, spawned: Child[]) => Promise<void>,
): Promise<void> {
  await withTempDir(async (dir) => {
    const root = join(dir, "master");
    await Deno.mkdir(root);
    const spawned = [spawnChronicle([root, ...args])];
    try {
      await waitFor(
        "master ready",
        async () => (await controlJson(join(root, ".chronicle"), "/ready")).status === 200,
      );
      await fn(dir, spawned);
    } finally {
      for (const child of spawned.reverse()) await child.stop();
    }
  }, "chronicle-connect-msg-");
}

Deno.test("a replica given the wrong token is told the master refused it", async () => {
  const port = freePort();
  await withMaster(
    ["--ws-listen", `127.0.0.1:${port}`, "--token", "right"],
    async (dir, spawned) => {
      await Deno.mkdir(join(dir, "replica"));
      const replica = spawnChronicle([
        join(dir, "replica"),
        "--ws-connect",
        `ws://127.0.0.1:${port}`,
        "--token",
        "wrong",
      ]);
      spawned.push(replica);
      await waitFor(
        "the refusal in the replica's log",
        () => replica.output().includes("the master refused the token"),
      );
      ok(replica.output().includes("--token"), replica.output());
    },
  );
});

Deno.test("a replica given the control socket is told it is not a replication socket", async () => {
  await withMaster(["--replication"], async (dir, spawned) => {
    await Deno.mkdir(join(dir, "replica"));
    const replica = spawnChronicle([
      join(dir, "replica"),
      "--connect",
      join(dir, "master", ".chronicle", "control.sock"),
    ]);
    spawned.push(replica);
    await waitFor(
      "the hint in the replica's log",
      () => replica.output().includes("the peer answered in HTTP: it is not a replication socket"),
    );
  });
});
