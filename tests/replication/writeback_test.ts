/**
 * Replica → master, end to end: write-back, conflicts, echo suppression, crash safety and
 * barriers, with master and replicas as separate processes on real sockets.
 */
import { put, putAtomic } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import { runChronicle } from "../_helpers/processes.ts";
import { sha256OfText } from "../_helpers/text_hash.ts";
import { assert, assertEquals } from "./_assert.ts";
import {
  type Peer,
  pseudoRandomBytes,
  replicaStatus,
  runDyingReplica,
  startMaster,
  startReplica,
  stopPeers,
  treeState,
  waitForLive,
  waitForSameTrees,
  withDirs,
  writeBacksAnswered,
} from "./_harness.ts";
import { type Conflict, connectUnix, type SyncWaitResult } from "../../lib/replication/mod.ts";
import type { Iteration } from "../../lib/store/mod.ts";
import type { WireMessage } from "../../lib/wire/mod.ts";
import { failedReason } from "../../lib/replication/writeback_outcomes.ts";
import { Workspace } from "../../lib/workspace/mod.ts";

Deno.test("a sandbox's create, edit, rename, chmod and delete reach the master and a second replica", async (t) => {
  await withDirs(["m", "r1", "r2"], async ({ base, m, r1, r2 }) => {
    const sock = `${base}/m.sock`;
    const master = await startMaster(m, sock);
    const sandbox = await startReplica(r1, sock, {
      name: "sandbox",
      args: ["--sandbox-id", "sb-1"],
    });
    const other = await startReplica(r2, sock, { name: "other" });
    const peers = [master, sandbox, other];
    const all = [m, r1, r2];
    try {
      // Each write in one step: the empty file of a truncate, captured alone, would be an
      // entry of its own, and the journal's entries are counted below.
      await t.step("create", async () => {
        await putAtomic(r1, "work/out.txt", "built by the sandbox");
        await putAtomic(r1, "work/big.bin", pseudoRandomBytes(4_300_000, 21)); // chunked, in content_bytes
        await waitForSameTrees(all, { peers });
      });
      await t.step("edit", async () => {
        await putAtomic(r1, "work/out.txt", "rebuilt by the sandbox");
        await waitForSameTrees(all, { peers });
      });
      await t.step("rename", async () => {
        await Deno.rename(`${r1}/work/out.txt`, `${r1}/work/renamed.txt`);
        const tree = await waitForSameTrees(all, { peers });
        assert(tree.has("work/renamed.txt") && !tree.has("work/out.txt"));
      });
      await t.step("chmod", async () => {
        await Deno.chmod(`${r1}/work/renamed.txt`, 0o750);
        const tree = await waitForSameTrees(all, { peers });
        assertEquals(tree.get("work/renamed.txt")!.split(" ")[0], "750");
      });
      await t.step("delete", async () => {
        await Deno.remove(`${r1}/work/big.bin`);
        const tree = await waitForSameTrees(all, { peers });
        assertEquals([...tree.keys()], ["work/renamed.txt"]);
      });
      const history = await master.command<Iteration[]>("history work/renamed.txt");
      assert(history.every((it) => it.origin === "sb-1"), JSON.stringify(history));
      const answered = await writeBacksAnswered(sandbox);
      assertEquals(answered.journal.rejected, 0);
      // The folder work, create ×2, edit, rename, chmod, delete: one entry each, the
      // rename as one entry.
      assertEquals(answered.journal.accepted, 7);
    } finally {
      await stopPeers(sandbox, other, master);
    }
  });
});

Deno.test("a write-back racing an agent edit is rejected; the sandbox takes the master's version and keeps its own", async () => {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    const sock = `${base}/m.sock`;
    await put(m, "shared.txt", "original");
    // A long debounce on the master: its capture of the agent's edit lags the write-back.
    const master = await startMaster(m, sock, { args: ["--debounce", "3000", "--wait-for-quiet"] });
    const sandbox = await startReplica(r, sock);
    try {
      await waitForSameTrees([m, r], { peers: [master, sandbox] });
      await put(m, "shared.txt", "agent edit");
      // In one step: a capture between a truncation and the write would send "" back.
      await putAtomic(r, "shared.txt", "sandbox edit");
      const tree = await waitForSameTrees([m, r], { peers: [master, sandbox] });
      assertEquals(tree.get("shared.txt"), `644 ${sha256OfText("agent edit")}`);
      const answered = await writeBacksAnswered(sandbox);
      assertEquals(answered.conflicts.length, 1);
      const conflict = answered.conflicts[0]!;
      assert(conflict.reason.startsWith("conflict"), conflict.reason);
      assertEquals(conflict.keptHash, sha256OfText("sandbox edit"));
      assertEquals(conflict.resolution, "upstream");
      const history = await master.command<Iteration[]>("history shared.txt");
      assert(
        !history.some((it) => it.hash === sha256OfText("sandbox edit")),
        "the sandbox's edit won",
      );
    } finally {
      await stopPeers(sandbox, master);
    }
  });
});

Deno.test("local-sync mode leaves a conflicting local file alone and lists the conflict", async () => {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    const sock = `${base}/m.sock`;
    await put(m, "shared.txt", "original");
    await put(m, "other.txt", "other");
    const master = await startMaster(m, sock, { args: ["--debounce", "3000", "--wait-for-quiet"] });
    const local = await startReplica(r, sock, { args: ["--mode", "local-sync"] });
    try {
      await waitForSameTrees([m, r], { peers: [master, local] });
      await put(m, "shared.txt", "agent edit");
      await put(r, "shared.txt", "my local edit");
      const answered = await waitFor("the conflict listed", async () => {
        const s = await replicaStatus(local);
        return s.conflicts.length === 1 && s.pendingWriteBacks === 0 ? s : null;
      });
      assertEquals(answered.role, "local-sync");
      assertEquals(answered.conflicts[0]!.resolution, null);
      // Everything else keeps flowing; the conflicting file stays as the person left it.
      await put(m, "other.txt", "other, edited");
      await master.command("settle");
      await waitForSameTrees([m, r], { peers: [master, local], exclude: ["shared.txt"] });
      assertEquals(await Deno.readTextFile(`${r}/shared.txt`), "my local edit");
      assertEquals(await Deno.readTextFile(`${m}/shared.txt`), "agent edit");
    } finally {
      await stopPeers(local, master);
    }
  });
});

Deno.test("two sandboxes writing one file at once: exactly one wins, the other's content is kept", async () => {
  await withDirs(["m", "r1", "r2"], async ({ base, m, r1, r2 }) => {
    const sock = `${base}/m.sock`;
    await put(m, "same.txt", "base");
    let master = await startMaster(m, sock);
    const one = await startReplica(r1, sock, { name: "one" });
    const two = await startReplica(r2, sock, { name: "two" });
    try {
      await waitForSameTrees([m, r1, r2], { peers: [master, one, two] });
      await master.stop(); // both write with the same view of the master
      // In one step each: a write captured after its truncate would journal two entries.
      await putAtomic(r1, "same.txt", "from one");
      await putAtomic(r2, "same.txt", "from two");
      await waitFor("one to journal", async () => (await replicaStatus(one)).journal.pending === 1);
      await waitFor("two to journal", async () => (await replicaStatus(two)).journal.pending === 1);
      master = await startMaster(m, sock);
      const tree = await waitForSameTrees([m, r1, r2], { peers: [master, one, two] });
      const [a, b] = [await writeBacksAnswered(one), await writeBacksAnswered(two)];
      const winner = tree.get("same.txt") === `644 ${sha256OfText("from one")}` ? "one" : "two";
      assert(
        [`644 ${sha256OfText("from one")}`, `644 ${sha256OfText("from two")}`].includes(
          tree.get("same.txt")!,
        ),
      );
      const [won, lost] = winner === "one" ? [a, b] : [b, a];
      assertEquals(won.conflicts.length, 0);
      assertEquals(lost.conflicts.length, 1);
      assertEquals(
        lost.conflicts[0]!.keptHash,
        sha256OfText(winner === "one" ? "from two" : "from one"),
      );
    } finally {
      await stopPeers(one, two, master);
    }
  });
});

Deno.test("a burst of 1,000 sandbox writes arrives complete and in order", async () => {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    const sock = `${base}/m.sock`;
    const master = await startMaster(m, sock);
    const sandbox = await startReplica(r, sock, { args: ["--sandbox-id", "burst"] });
    try {
      await sandbox.command("sync-wait 20000");
      const names = Array.from({ length: 1000 }, (_, i) => `burst/f${String(i).padStart(4, "0")}`);
      // Each in one step: a capture between a truncation and the write would record the
      // empty file as a version of its own, and the path would come twice.
      for (const name of names) await putAtomic(r, name, `content of ${name}`);
      const tree = await waitForSameTrees([m, r], { peers: [master, sandbox], timeoutMs: 60_000 });
      assertEquals(tree.size, 1000);
      // The sandbox's own record first: an order wrong there was its capture's, not the
      // write-back's.
      const made = await sandbox.command<Iteration[]>("changes 0");
      const own = made.filter((it) => it.origin === "local").map((it) => it.path);
      assertEquals(own, ["burst", ...names], "the sandbox recorded its writes out of order");
      const changes = await master.command<Iteration[]>("changes 0");
      const order = changes.filter((it) => it.origin === "burst").map((it) => it.path);
      // The folder first (PROTOCOL.md §8).
      assertEquals(order, ["burst", ...names], "the master recorded the write-backs out of order");
    } finally {
      await stopPeers(sandbox, master);
    }
  });
});

Deno.test("a large initial sync pauses the sandbox's watcher; local writes during and after it reach the master", async () => {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    const sock = `${base}/m.sock`;
    for (let i = 0; i < 600; i++) await put(m, `agent/${i % 10}/${i}.txt`, `agent ${i}`);
    const master = await startMaster(m, sock);
    // No safety rescan for minutes: only the watcher, or the scan resuming it, records.
    const sandbox = await startReplica(r, sock, { args: ["--rescan", "600000"] });
    try {
      // Lands before, during or after the pause, whichever: recorded by the startup scan,
      // the resuming scan or the watcher. The log lines and after.txt are what prove the
      // pause and the resume.
      await put(r, "sandbox/during.txt", "written while the sync runs");
      await waitForLive(sandbox);
      assert(
        sandbox.logs().includes("watching paused while the catch-up is applied"),
        sandbox.logs(),
      );
      await waitFor("the watcher resumed", () => sandbox.logs().includes("watching resumed"));
      // In a new folder, after the resuming scan, with no rescan for minutes: only the
      // watcher can record it.
      await put(r, "later/after.txt", "written once in sync");
      const tree = await waitForSameTrees([m, r], { peers: [master, sandbox] });
      assertEquals(tree.size, 602);
    } finally {
      await stopPeers(sandbox, master);
    }
  });
});

Deno.test("a large change arriving live pauses the sandbox's watcher; local writes during and after it reach the master", async () => {
  await withDirs(["m", "r", "staging"], async ({ base, m, r, staging }) => {
    const sock = `${base}/m.sock`;
    await put(m, "before.txt", "before the change");
    const master = await startMaster(m, sock);
    // No safety rescan for minutes: only the watcher, or the scan resuming it, records.
    const sandbox = await startReplica(r, sock, { args: ["--rescan", "600000"] });
    try {
      await sandbox.command("sync-wait 20000");
      for (let i = 0; i < 700; i++) await put(staging, `${i % 10}/${i}.txt`, `agent ${i}`);
      // One rename: the master records the whole folder at once, and its notifications
      // reach the sandbox far faster than it writes their files.
      await Deno.rename(staging, `${m}/incoming`);
      await waitFor(
        "the sandbox paused its watcher for the change",
        () => sandbox.logs().includes("watching paused while a large change is applied"),
      );
      // Lands during or after the pause: recorded by the resuming scan or the watcher.
      await put(r, "sandbox/during.txt", "written while the change is applied");
      await waitFor("the watcher resumed", () => {
        const logs = sandbox.logs();
        return logs.indexOf("watching resumed") > logs.indexOf("watching paused while a large");
      });
      // In a new folder, after the resuming scan, with no rescan for minutes: only the
      // watcher can record it.
      await put(r, "later/after.txt", "written once the change is applied");
      const tree = await waitForSameTrees([m, r], { peers: [master, sandbox] });
      assertEquals(tree.size, 703);
    } finally {
      await stopPeers(sandbox, master);
    }
  });
});

/**
 * Starts a master on `m` and a sandbox on `r`, synced; stops the sandbox, lets `change` alter
 * its folder and `record` it (a scan of its own workspace, as while no replica ran), then
 * starts it again: it journals what was recorded at once. Checks that the master refused
 * none of it.
 *
 * @returns The trees, once the same.
 */
async function changedWhileNoReplicaRan(
  dirs: { base: string; m: string; r: string },
  change: (record: () => Promise<unknown>) => Promise<void>,
): Promise<Map<string, string>> {
  const { base, m, r } = dirs;
  const sock = `${base}/m.sock`;
  const master = await startMaster(m, sock);
  let sandbox = await startReplica(r, sock);
  try {
    await waitForSameTrees([m, r], { peers: [master, sandbox] });
    await sandbox.stop();
    const workspace = await Workspace.open({ root: r });
    try {
      await change(() => workspace.scan());
    } finally {
      await workspace.close();
    }
    sandbox = await startReplica(r, sock);
    const answered = await writeBacksAnswered(sandbox);
    assertEquals(answered.journal.rejected, 0, JSON.stringify(answered.conflicts));
    return await waitForSameTrees([m, r], { peers: [master, sandbox] });
  } finally {
    await stopPeers(sandbox, master);
  }
}

// As `rm -rf node_modules` then `npm install` around a replica's restart: its scan records
// the removals, a later capture the same files again, and the replica journals both at once
// when it starts. Made again in one order, each removal and its own path's creation were a
// rename onto itself (refused); in the other, each other's renames (the master lost one of
// the two files).
for (const order of ["in path order", "in the other order"]) {
  Deno.test(`files of one content removed and made again while no replica ran stay on the master, no renames (made again ${order})`, async () => {
    await withDirs(["m", "r"], async (dirs) => {
      const paths = ["a.txt", "d/a.txt"];
      const content = "module.exports = require('./x');\n";
      for (const path of paths) await put(dirs.m, path, content);
      const tree = await changedWhileNoReplicaRan(dirs, async (record) => {
        // The folder too: made again, it stays (its removal would be refused: it holds a
        // file made again).
        await Deno.remove(`${dirs.r}/a.txt`);
        await Deno.remove(`${dirs.r}/d`, { recursive: true });
        await record();
        // A scan records files in the order of their modification times.
        for (const [i, path] of paths.entries()) {
          await put(dirs.r, path, content);
          const time = order === "in path order" ? 1_000 + i : 1_000 - i;
          await Deno.utime(`${dirs.r}/${path}`, time, time);
        }
        await record();
      });
      assertEquals([...tree.keys()].filter((path) => path.endsWith(".txt")), paths);
    });
  });
}

Deno.test("a folder removed and made a file of its name while no replica ran is that file on the master", async () => {
  await withDirs(["m", "r"], async (dirs) => {
    await put(dirs.m, "d/a.txt", "in the folder");
    const tree = await changedWhileNoReplicaRan(dirs, async (record) => {
      await Deno.remove(`${dirs.r}/d`, { recursive: true });
      await record();
      await put(dirs.r, "d", "a file now");
      await record();
    });
    assertEquals(tree.get("d"), `644 ${sha256OfText("a file now")}`);
  });
});

Deno.test("no echo loop: exactly one write-back per real change", async () => {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    const sock = `${base}/m.sock`;
    for (let i = 0; i < 20; i++) await put(m, `agent/${i}.txt`, `agent ${i}`);
    const master = await startMaster(m, sock);
    const sandbox = await startReplica(r, sock, { args: ["--sandbox-id", "echo"] });
    try {
      await waitForSameTrees([m, r], { peers: [master, sandbox] });
      // In one step each: a new file captured empty, before its content, would be written
      // back twice, and the write-backs are counted below.
      for (let i = 0; i < 5; i++) await putAtomic(r, `sandbox/${i}.txt`, `sandbox ${i}`);
      for (let i = 0; i < 20; i += 2) await put(m, `agent/${i}.txt`, `agent edit ${i}`);
      await waitForSameTrees([m, r], { peers: [master, sandbox] });
      await master.command("settle");
      await sandbox.command("sync-wait 20000");
      await sandbox.command("settle");
      const answered = await writeBacksAnswered(sandbox);
      // The five files and their folder.
      assertEquals(answered.journal.accepted, 5 + 1);
      assertEquals(answered.journal.rejected + answered.journal.refused, 0);
      const changes = await master.command<Iteration[]>("changes 0");
      assertEquals(changes.filter((it) => it.origin === "echo").length, 5 + 1);
    } finally {
      await stopPeers(sandbox, master);
    }
  });
});

Deno.test("a replica killed between journaling and sending, then again after sending: each entry applies once", async () => {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    const sock = `${base}/m.sock`;
    await put(m, "file.txt", "v0");
    let master = await startMaster(m, sock);
    let sandbox = await startReplica(r, sock, { args: ["--sandbox-id", "crashy"] });
    try {
      await waitForSameTrees([m, r], { peers: [master, sandbox] });
      await master.stop();
      // Written atomically: a truncate-then-write can be captured half-way on a loaded
      // machine (an empty version is a real, third local change), and this test is about
      // two changes each applied exactly once.
      await putAtomic(r, "file.txt", "v1");
      await waitFor(
        "v1 journaled",
        async () => (await replicaStatus(sandbox)).journal.pending === 1,
      );
      await putAtomic(r, "file.txt", "v2");
      await waitFor(
        "v2 journaled",
        async () => (await replicaStatus(sandbox)).journal.pending === 2,
      );
      await sandbox.kill(); // journaled, never sent
      master = await startMaster(m, sock);
      // This run sends both entries and dies before the answer arrives.
      const dying = await runDyingReplica(r, sock, ["--sandbox-id", "crashy"]);
      assertEquals(dying.code, 137, dying.stderr);
      sandbox = await startReplica(r, sock, { args: ["--sandbox-id", "crashy"] });
      const tree = await waitForSameTrees([m, r], { peers: [master, sandbox] });
      assertEquals(tree.get("file.txt"), `644 ${sha256OfText("v2")}`);
      const answered = await writeBacksAnswered(sandbox);
      assertEquals(answered.journal.accepted, 2);
      const history = await master.command<Iteration[]>("history file.txt");
      assertEquals(history.map((it) => it.hash), [
        sha256OfText("v0"),
        sha256OfText("v1"),
        sha256OfText("v2"),
      ]);
    } finally {
      await stopPeers(sandbox, master);
    }
  });
});

Deno.test("a master killed while it applies a burst of write-backs takes the rest after restarting, with no conflict", async () => {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    const sock = `${base}/m.sock`;
    await put(m, "seed.txt", "seed");
    let master = await startMaster(m, sock);
    const sandbox = await startReplica(r, sock);
    try {
      await waitForSameTrees([m, r], { peers: [master, sandbox] });
      await master.stop();
      // In one step each: a new file captured empty, before its content, is a second entry.
      for (let i = 0; i < 2000; i++) await putAtomic(r, `w/${i % 20}/${i}.txt`, `sandbox ${i}`);
      await waitFor(
        "the burst journaled",
        // The files, and their folders w, w/0 … w/19.
        async () => (await replicaStatus(sandbox)).journal.pending === 2000 + 21,
      );
      master = await startMaster(m, sock);
      // Killed as the first files land: most likely with a batch written and not recorded.
      const landed = () => filesIn(`${m}/w`);
      await waitFor("write-backs landing on the master", () => landed() > 0, { intervalMs: 1 });
      await master.kill();
      const there = landed();
      assert(there > 0 && there < 2000, `killed in the middle: ${there} of 2000 files there`);
      master = await startMaster(m, sock);
      await waitForSameTrees([m, r], { peers: [master, sandbox] });
      const answered = await writeBacksAnswered(sandbox);
      assertEquals(answered.conflicts, []);
      assertEquals(answered.journal.accepted, 2000 + 21);
    } finally {
      await stopPeers(sandbox, master);
    }
  });
});

Deno.test("barrier: sync --wait returns once the replica holds what the master held when asked", async (t) => {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    const sock = `${base}/m.sock`;
    const master = await startMaster(m, sock, { args: ["--barrier-timeout", "300"] });
    const replica = await startReplica(r, sock);
    try {
      await t.step("satisfied, with no polling afterwards", async () => {
        for (let i = 0; i < 30; i++) {
          await put(m, `b/${i}.bin`, pseudoRandomBytes(6000 + i, i + 40));
        }
        const { sequence } = await waitFor("the master to record 30 files", async () => {
          const settled = await master.command<{ sequence: number }>("settle");
          return settled.sequence >= 30 ? settled : null;
        });
        const result = await replica.command<SyncWaitResult>("sync-wait 20000");
        assert(result.satisfied, JSON.stringify(result));
        assert(result.masterSequence >= sequence && result.appliedSequence >= sequence);
        const [a, b] = [await treeState(m), await treeState(r)];
        assertEquals([...b.entries()].sort(), [...a.entries()].sort());
      });
      await t.step("a sequence the master has not reached times out unsatisfied", async () => {
        const client = await connectUnix(sock);
        await client.send({
          type: "CatchupRequest",
          sandbox_id: "barrier-probe",
          since_sequence: 0n,
        });
        await client.send({ type: "BarrierRequest", sequence: 1_000_000n });
        let answer: WireMessage | undefined;
        for await (const message of client.messages()) {
          if (message.type === "BarrierConfirmation") {
            answer = message;
            break;
          }
        }
        client.close();
        assert(answer?.type === "BarrierConfirmation");
        assertEquals(answer.satisfied, false);
        assert(answer.current_sequence >= 30n);
      });
    } finally {
      await stopPeers(replica, master);
    }
  });
});

Deno.test("local writes over the write-back limit are refused locally and listed", async () => {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    const sock = `${base}/m.sock`;
    const master = await startMaster(m, sock);
    const sandbox = await startReplica(r, sock, { args: ["--max-writeback", "1000"] });
    try {
      // In one step: captured empty first, huge.bin would be written back (empty fits).
      // Renamed into place, it waits for the watcher's quiet time, where a file closed
      // after writing does not: small.txt is written once huge.bin is refused, not before.
      await putAtomic(r, "huge.bin", pseudoRandomBytes(5000, 9));
      await waitFor("huge.bin refused", async () => {
        const status = await replicaStatus(sandbox);
        return status.refused.some((entry) => entry.path === "huge.bin");
      });
      await put(r, "small.txt", "fits");
      await waitFor("small.txt on the master", async () => (await treeState(m)).has("small.txt"));
      const answered = await writeBacksAnswered(sandbox);
      assertEquals(answered.refused.length, 1);
      assertEquals(answered.refused[0]!.path, "huge.bin");
      assert(answered.refused[0]!.reason.startsWith("too large"), answered.refused[0]!.reason);
      assert(!(await treeState(m)).has("huge.bin"));
      assert(sandbox.logs().includes("refused for write-back"), sandbox.logs());
      assertEquals(answered.openRefusedCount, 1);
      // Removed since: that removal goes through, and the refusal is no longer listed.
      await Deno.remove(`${r}/huge.bin`);
      const superseded = await waitFor("the refusal superseded", async () => {
        const status = await replicaStatus(sandbox);
        return status.openRefusedCount === 0 ? status : undefined;
      });
      assertEquals(superseded.refused, []);
      const listed = await runChronicle(["conflicts", "-C", r, "--json"]);
      assertEquals(listed.code, 0, listed.stderr);
      const { refused } = JSON.parse(listed.stdout) as {
        refused: { path: string; superseded: boolean }[];
      };
      assertEquals(refused.map(({ path, superseded }) => ({ path, superseded })), [
        { path: "huge.bin", superseded: true },
      ]);
      const table = await runChronicle(["conflicts", "-C", r]);
      assert(/huge\.bin\s+write\s+resolved \(superseded\)/.test(table.stdout), table.stdout);
    } finally {
      await stopPeers(sandbox, master);
    }
  });
});

/**
 * Runs `work` with a master whose write-back limit is 1,000 bytes and a replica of it, and
 * a file of 5,000 bytes written on the replica, which the master refuses as too large.
 *
 * @param before What the master's big.bin holds first, if anything (the replica syncs it).
 */
async function withRefusedFile(
  work: (
    peers: { m: string; r: string; master: Peer; sandbox: Peer },
    conflicts: () => Promise<Conflict[]>,
  ) => Promise<void>,
  before?: string,
): Promise<void> {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    const sock = `${base}/m.sock`;
    if (before !== undefined) await put(m, "big.bin", before);
    const master = await startMaster(m, sock, { args: ["--max-writeback", "1000"] });
    const sandbox = await startReplica(r, sock);
    const conflicts = () => sandbox.command<Conflict[]>("conflicts");
    try {
      if (before !== undefined) await sandbox.command("sync-wait 20000");
      await putAtomic(r, "big.bin", pseudoRandomBytes(5000, 9));
      await waitFor("the master's refusal listed", async () => (await conflicts()).length === 1);
      await work({ m, r, master, sandbox }, conflicts);
    } finally {
      await stopPeers(sandbox, master);
    }
  });
}

Deno.test("a change the master refused as too large is settled once a later change of the file goes through", () =>
  withRefusedFile(async ({ m, r, master }, conflicts) => {
    const [refused] = await conflicts();
    assert(refused!.reason.startsWith("too large"), refused!.reason);
    assertEquals(refused!.resolvedMs, null);
    await putAtomic(r, "big.bin", pseudoRandomBytes(500, 9));
    await waitFor(
      "the smaller big.bin on the master",
      async () => (await Deno.stat(`${m}/big.bin`).catch(() => null))?.size === 500,
    );
    await waitFor("the refusal settled", async () => (await conflicts())[0]!.resolvedMs !== null);
    assertEquals((await conflicts())[0]!.resolution, "superseded");
    // Not kept on the master (nothing trustworthy came along), but said in its log.
    assert(master.logs().includes("write-back refused"), master.logs());
  }));

for (const before of [undefined, "the master's own older big.bin\n"]) {
  Deno.test(
    `a file the master refused, renamed in the sandbox, keeps the sandbox's content; the refusal follows it (${
      before === undefined ? "new on the sandbox" : "the master holds an older version"
    })`,
    () =>
      withRefusedFile(async ({ m, r }, conflicts) => {
        await Deno.rename(`${r}/big.bin`, `${r}/moved.bin`);
        // Not a rename on the master, whose big.bin is not the sandbox's: moved there, the
        // master's older version came back over the sandbox's moved.bin (or, none there, the
        // rename failed and moved.bin never reached it). A removal and a write instead.
        const refusals = await waitFor("the refusal of moved.bin", async () => {
          const all = await conflicts();
          return all.some((c) => c.path === "moved.bin" && c.reason.startsWith("too large"))
            ? all
            : null;
        });
        await waitFor("no big.bin on the master", async () => !(await exists(`${m}/big.bin`)));
        assertEquals(await Deno.readFile(`${r}/moved.bin`), pseudoRandomBytes(5000, 9));
        assert(!(await exists(`${m}/moved.bin`)), "the master has moved.bin");
        const old = refusals.find((c) => c.path === "big.bin")!;
        await waitFor("big.bin's refusal settled", async () => {
          const now = (await conflicts()).find((c) => c.id === old.id)!;
          return now.resolution === "superseded";
        });
      }, before),
  );
}

Deno.test("failedReason() names paths inside the master's workspace, never its own folder", () =>
  withDirs(["m"], ({ m }) => {
    // A real failure of the system's, which names absolute paths.
    const error = (() => {
      try {
        Deno.renameSync(`${m}/big.bin`, `${m}/sub/moved.bin`);
      } catch (error) {
        return error;
      }
      throw new Error("the rename of a missing file succeeded");
    })();
    const reason = failedReason(error, m);
    assert(reason.startsWith("failed: "), reason);
    assert(!reason.includes(m), reason);
    assert(reason.includes("'big.bin' -> 'sub/moved.bin'"), reason);
    return Promise.resolve();
  }));

/** Whether anything is at `path` (a link not followed). */
async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

/** How many files the folders directly inside `dir` hold (0 while `dir` is missing). */
function filesIn(dir: string): number {
  let count = 0;
  try {
    for (const folder of Deno.readDirSync(dir)) {
      for (const entry of Deno.readDirSync(`${dir}/${folder.name}`)) if (entry.isFile) count++;
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return count;
}
