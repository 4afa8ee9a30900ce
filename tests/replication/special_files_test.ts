/**
 * Special files (named pipes, sockets) a sandbox makes where the master has a file: never
 * recorded, so never a local change to weigh. End to end, master and replica as separate
 * processes (a pipe can make Deno's watcher wait: see `PipeHolder`).
 */
import { put } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import { assert, assertEquals } from "./_assert.ts";
import {
  type Peer,
  replicaStatus,
  startMaster,
  startReplica,
  stopPeers,
  waitForLive,
  waitForSameTrees,
  withDirs,
} from "./_harness.ts";

/** Runs `work` with a master and a live replica of it (separate processes), stopped after. */
async function withLivePair(
  work: (dirs: { m: string; r: string }, peers: { master: Peer; replica: Peer }) => Promise<void>,
): Promise<void> {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    const sock = `${base}/m.sock`;
    const master = await startMaster(m, sock);
    const replica = await startReplica(r, sock);
    try {
      await waitForLive(replica);
      await work({ m, r }, { master, replica });
    } finally {
      await stopPeers(replica, master);
    }
  });
}

/** Makes a named pipe at `path`. */
function mkfifo(path: string): void {
  assert(new Deno.Command("mkfifo", { args: [path] }).outputSync().success, "mkfifo");
}

Deno.test("a master file where the replica holds a named pipe waits, listed as not applied, until the pipe goes", async () => {
  await withLivePair(async ({ m, r }, { master, replica }) => {
    mkfifo(`${r}/clash`);
    await put(m, "clash", "the master's file");
    await put(m, "after.txt", "after");
    await waitFor("after.txt on the replica", async () => {
      try {
        return await Deno.readTextFile(`${r}/after.txt`) === "after";
      } catch {
        return false;
      }
    });
    const listed = await waitFor("clash listed as not applied", async () => {
      const { problems } = await replicaStatus(replica);
      return problems.find((problem) => problem.path === "clash");
    });
    assertEquals(
      listed.reason,
      "a named pipe is there, which is never recorded: the master's version waits until it goes",
    );
    assert(Deno.lstatSync(`${r}/clash`).isFifo, "the pipe is left as it is");
    await Deno.remove(`${r}/clash`);
    await waitForSameTrees([m, r], { peers: [master, replica], timeoutMs: 30_000 });
    assertEquals(await Deno.readTextFile(`${r}/clash`), "the master's file");
    const { problems } = await replicaStatus(replica);
    assertEquals(problems, [], "applied since: no longer listed");
    const held = replica.logs().split("\n").filter((line) => line.includes("path=clash"));
    assertEquals(held.filter((line) => line.includes("not applied")).length, 1, held.join("\n"));
  });
});

Deno.test("a sandbox file where the master holds a named pipe is refused, saying so", async () => {
  await withLivePair(async ({ m, r }, { replica }) => {
    mkfifo(`${m}/clash`);
    await put(r, "clash", "the sandbox's file");
    const refused = await waitFor("the sandbox's clash refused", async () => {
      const conflicts = await replica.command<{ path: string; reason: string }[]>("conflicts");
      return conflicts.find((conflict) => conflict.path === "clash");
    });
    assert(
      refused.reason.includes(
        '"clash" holds a named pipe, which is never recorded, so it was left as it is',
      ),
      refused.reason,
    );
    assert(Deno.lstatSync(`${m}/clash`).isFifo, "the master's pipe is left as it is");
  });
});
