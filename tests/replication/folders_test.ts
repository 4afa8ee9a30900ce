/**
 * Folders replicated both ways (PROTOCOL.md §8), end to end: master and replicas as
 * separate processes on a real Unix socket, trees compared with their folders and modes.
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
  writeBacksAnswered,
} from "./_harness.ts";
import type { Iteration } from "../../lib/store/mod.ts";

/** Trees equal with their folders and each folder's mode. */
function sameTrees(roots: string[], peers: Peer[]): Promise<Map<string, string>> {
  return waitForSameTrees(roots, { peers, folders: true, timeoutMs: 30_000 });
}

/** Makes a deep folder tree under `root/top`: files, empty folders, several levels. */
async function deepTree(root: string, top: string): Promise<number> {
  let folders = 0;
  for (let a = 0; a < 3; a++) {
    for (let b = 0; b < 3; b++) {
      await Deno.mkdir(`${root}/${top}/${a}/${b}/empty`, { recursive: true });
      folders++;
      if (b !== 1) await put(root, `${top}/${a}/${b}/file.txt`, `${top} ${a} ${b}`);
    }
  }
  return folders;
}

/** The folders and files under `top` in a tree state, by path. */
function under(tree: Map<string, string>, top: string): string[] {
  return [...tree.keys()].filter((path) => path === top || path.startsWith(`${top}/`));
}

/**
 * The three folder operations from `from` (the side the change is made on) to all: an
 * empty folder with its mode, a mode change, and a deep tree's removal.
 */
async function folderOperations(
  t: Deno.TestContext,
  from: string,
  all: string[],
  peers: Peer[],
): Promise<void> {
  await t.step("an empty folder appears with its mode", async () => {
    await Deno.mkdir(`${from}/emptydir`, { mode: 0o750 });
    await Deno.chmod(`${from}/emptydir`, 0o750);
    const tree = await sameTrees(all, peers);
    assertEquals(tree.get("emptydir"), "dir 750");
  });
  await t.step("a mode change travels", async () => {
    await Deno.chmod(`${from}/emptydir`, 0o701);
    const tree = await sameTrees(all, peers);
    assertEquals(tree.get("emptydir"), "dir 701");
  });
  await t.step("a deep tree removed leaves nothing behind", async () => {
    await deepTree(from, "deep");
    const before = await sameTrees(all, peers);
    assertEquals(under(before, "deep").length, 1 + 3 + 9 + 9 + 6, "deep, a, a/b, empties, files");
    await Deno.remove(`${from}/deep`, { recursive: true });
    const after = await sameTrees(all, peers);
    assertEquals(under(after, "deep"), []);
  });
}

Deno.test("folders from the master: empty ones with their modes, mode changes, a deep tree's removal", async (t) => {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    const sock = `${base}/m.sock`;
    const master = await startMaster(m, sock);
    const replica = await startReplica(r, sock);
    try {
      await folderOperations(t, m, [m, r], [master, replica]);
      const history = await master.command<Iteration[]>("history emptydir");
      assertEquals(
        history.map((it) => [it.mode.toString(8), it.deleted]),
        [["40750", false], ["40701", false]],
        "a folder is iterations of its path with the folder type bits",
      );
    } finally {
      await stopPeers(replica, master);
    }
  });
});

Deno.test("folders from a replica: written back to the master and on to another replica", async (t) => {
  await withDirs(["m", "r1", "r2"], async ({ base, m, r1, r2 }) => {
    const sock = `${base}/m.sock`;
    const master = await startMaster(m, sock);
    const sandbox = await startReplica(r1, sock, { name: "sandbox", args: ["--sandbox-id", "sb"] });
    const other = await startReplica(r2, sock, { name: "other" });
    const peers = [master, sandbox, other];
    try {
      await folderOperations(t, r1, [m, r1, r2], peers);
      const answered = await writeBacksAnswered(sandbox);
      assertEquals(answered.conflicts, []);
      assertEquals(answered.journal.rejected + answered.journal.refused, 0);
      const history = await master.command<Iteration[]>("history deep/0/0/empty");
      assertEquals(history.map((it) => [it.origin, it.deleted]), [["sb", false], ["sb", true]]);
    } finally {
      await stopPeers(sandbox, other, master);
    }
  });
});

Deno.test("folders in a catch-up from zero and in a full resync", async (t) => {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    const sock = `${base}/m.sock`;
    await Deno.mkdir(`${m}/empty/nested`, { recursive: true });
    await Deno.chmod(`${m}/empty`, 0o711);
    await deepTree(m, "deep");
    let master = await startMaster(m, sock);
    let replica = await startReplica(r, sock);
    try {
      await t.step("from zero", async () => {
        const tree = await sameTrees([m, r], [master, replica]);
        assertEquals(tree.get("empty"), "dir 711");
        assertEquals(tree.get("empty/nested"), "dir 755");
      });
      await t.step("a full resync removes the folders the master no longer has", async () => {
        await replica.stop();
        await Deno.remove(`${m}/deep/1`, { recursive: true });
        await Deno.mkdir(`${m}/new/empty`, { recursive: true });
        await Deno.chmod(`${m}/empty`, 0o755);
        const sequence = await waitFor("the master to record the changes", async () => {
          const { sequence } = await master.command<{ sequence: number }>("settle");
          const history = await master.command<Iteration[]>("history new/empty");
          return history.length === 1 ? sequence : 0;
        });
        // A folder only on the replica, with a local file still to be written back: kept.
        await Deno.mkdir(`${r}/mine`);
        await put(r, "mine/pending.txt", "the replica's own");
        await master.stop();
        master = await startMaster(m, sock);
        await master.command(`set-floor ${sequence}`);
        replica = await startReplica(r, sock);
        const tree = await sameTrees([m, r], [master, replica]);
        assertEquals(under(tree, "deep/1"), []);
        assertEquals(tree.get("new/empty"), "dir 755");
        assertEquals(tree.get("mine/pending.txt")?.split(" ")[0], "644");
        assert(master.logs().includes("replica must resync"), master.logs());
        // Its write-back is accepted during the resync, after the sequence the resync
        // reaches: the sweep must not take it for a path the master lacks (and remove it
        // until the master's echo of it brings it back).
        await writeBacksAnswered(replica);
        await waitForLive(replica);
        for (const path of ["mine", "mine/pending.txt"]) {
          const history = await replica.command<Iteration[]>(`history ${path}`);
          assertEquals(history.filter((it) => it.deleted), [], `"${path}" never removed`);
        }
      });
      await t.step("the master's store replaced: local folders it lacks are removed", async () => {
        await replica.stop();
        await master.stop();
        // Recorded by the replica while the master was away: a local change written back.
        await Deno.mkdir(`${r}/local/empty`, { recursive: true });
        // Gone from the new master, which never knew it: the resync's sweep removes it.
        await Deno.remove(`${m}/deep/0`, { recursive: true });
        // Changed on the master since the replica's write of it was accepted: the new
        // master's numbering starts again, so that acceptance (at a higher sequence of
        // the old store) must not make the replica skip the new master's version.
        await put(m, "mine/pending.txt", "the master's, since");
        await Deno.remove(`${m}/.chronicle`, { recursive: true });
        master = await startMaster(m, sock);
        replica = await startReplica(r, sock);
        const tree = await sameTrees([m, r], [master, replica]);
        assertEquals(under(tree, "deep/0"), []);
        assertEquals(await Deno.readTextFile(`${r}/mine/pending.txt`), "the master's, since");
        assertEquals(tree.get("local/empty"), "dir 755", "a local folder is written back");
        await waitForLive(replica);
        const status = await replicaStatus(replica);
        assertEquals(status.conflicts, []);
      });
    } finally {
      await stopPeers(replica, master);
    }
  });
});

Deno.test("a folder replaced by a file, a file by a folder and a folder by a link, both ways", async (t) => {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    const sock = `${base}/m.sock`;
    const master = await startMaster(m, sock);
    const replica = await startReplica(r, sock);
    const peers = [master, replica];
    try {
      for (const [side, other] of [[m, r], [r, m]] as const) {
        const name = side === m ? "on the master" : "on the replica";
        await t.step(`${name}: set up`, async () => {
          await put(side, "was-folder/inside/a.txt", "inside");
          await put(side, "was-file", "a file");
          await put(side, "now-a-link/inside.txt", "inside");
          await sameTrees([m, r], peers);
        });
        await t.step(`${name}: replaced`, async () => {
          await Deno.remove(`${side}/was-folder`, { recursive: true });
          await put(side, "was-folder", "now a file");
          await Deno.remove(`${side}/was-file`);
          await Deno.mkdir(`${side}/was-file/now-a-folder`, { recursive: true });
          await Deno.remove(`${side}/now-a-link`, { recursive: true });
          await Deno.symlink("was-file", `${side}/now-a-link`);
          const tree = await sameTrees([m, r], peers);
          assertEquals(tree.get("now-a-link")?.split(" ")[0], "link");
          assertEquals(under(tree, "now-a-link"), ["now-a-link"]);
          assertEquals(tree.get("was-folder")?.split(" ")[0], "644");
          assertEquals(tree.get("was-file"), "dir 755");
          assertEquals(tree.get("was-file/now-a-folder"), "dir 755");
          assertEquals(under(tree, "was-folder"), ["was-folder"]);
        });
        await t.step(`${name}: cleaned up`, async () => {
          await Deno.remove(`${side}/was-folder`);
          await Deno.remove(`${side}/was-file`, { recursive: true });
          await Deno.remove(`${side}/now-a-link`);
          const tree = await sameTrees([m, r], peers);
          assertEquals([...tree.keys()], [], `nothing left ${other === m ? "on the master" : ""}`);
        });
      }
      const status = await writeBacksAnswered(replica);
      assertEquals(status.conflicts, []);
    } finally {
      await stopPeers(replica, master);
    }
  });
});

Deno.test("a folder replaced by a file on the replica while the master changed what it holds: the master's folder wins, the replica's file is kept in its conflicts", async (t) => {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    const sock = `${base}/m.sock`;
    const master = await startMaster(m, sock);
    let replica = await startReplica(r, sock);
    const masterChanges = async () => {
      await put(m, "d/a.txt", "edited on the master");
    };
    try {
      for (const order of ["the replica first", "the master first"]) {
        await t.step(order, async () => {
          await put(m, "d/a.txt", "inside");
          await sameTrees([m, r], [master, replica]);
          await replica.stop();
          if (order === "the master first") await masterChanges();
          await Deno.remove(`${r}/d`, { recursive: true });
          await put(r, "d", "a file replacing the folder");
          if (order === "the replica first") await masterChanges();
          replica = await startReplica(r, sock);
          const tree = await sameTrees([m, r], [master, replica]);
          assertEquals(tree.get("d"), "dir 755");
          assertEquals(under(tree, "d"), ["d", "d/a.txt"]);
          const status = await writeBacksAnswered(replica);
          const kept = status.conflicts.filter((c) => c.keptHash !== null).map((c) => c.path);
          assertEquals([...new Set(kept)], ["d"], "the replica's file is kept");
          assertEquals(status.problems, []);
          await Deno.remove(`${m}/d`, { recursive: true });
          assertEquals([...(await sameTrees([m, r], [master, replica])).keys()], []);
        });
      }
    } finally {
      await stopPeers(replica, master);
    }
  });
});

Deno.test("a file replaced by a folder on the master while the replica edits the file: the master's folder wins, the replica's edit is kept in its conflicts", async (t) => {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    const sock = `${base}/m.sock`;
    const master = await startMaster(m, sock);
    let replica = await startReplica(r, sock);
    const masterChanges = async () => {
      await Deno.remove(`${m}/f`);
      await put(m, "f/sub/x", "inside the folder");
    };
    try {
      for (const order of ["the replica first", "the master first"]) {
        await t.step(order, async () => {
          await put(m, "f", "a file");
          await sameTrees([m, r], [master, replica]);
          await replica.stop();
          if (order === "the master first") await masterChanges();
          await put(r, "f", "edited on the replica");
          if (order === "the replica first") await masterChanges();
          replica = await startReplica(r, sock);
          const tree = await sameTrees([m, r], [master, replica]);
          assertEquals(tree.get("f"), "dir 755");
          assertEquals(under(tree, "f"), ["f", "f/sub", "f/sub/x"]);
          const status = await writeBacksAnswered(replica);
          const kept = status.conflicts.filter((c) => c.keptHash !== null).map((c) => c.path);
          assertEquals([...new Set(kept)], ["f"], "the replica's edit is kept");
          assertEquals(status.problems, []);
          await Deno.remove(`${m}/f`, { recursive: true });
          assertEquals([...(await sameTrees([m, r], [master, replica])).keys()], []);
        });
      }
    } finally {
      await stopPeers(replica, master);
    }
  });
});

Deno.test("a folder removed on the master while the replica edits a file in it: the folder goes once the edit is settled as a conflict", async (t) => {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    const sock = `${base}/m.sock`;
    const master = await startMaster(m, sock);
    let replica = await startReplica(r, sock);
    const keptBefore: string[] = [];
    try {
      for (const order of ["the replica first", "the master first"]) {
        await t.step(order, async () => {
          await put(m, "d/sub/a.txt", "inside");
          await put(m, "d/b.txt", "beside");
          await sameTrees([m, r], [master, replica]);
          await replica.stop();
          if (order === "the master first") await Deno.remove(`${m}/d`, { recursive: true });
          await put(r, "d/sub/a.txt", "edited on the replica");
          if (order === "the replica first") await Deno.remove(`${m}/d`, { recursive: true });
          replica = await startReplica(r, sock);
          // The folders the master removed were kept while the edit inside waited for its
          // answer; the conflict settled, nothing is left in them and they go too.
          const tree = await sameTrees([m, r], [master, replica]);
          assertEquals(under(tree, "d"), []);
          const status = await writeBacksAnswered(replica);
          const kept = status.conflicts.filter((c) => c.keptHash !== null).map((c) => c.path);
          keptBefore.push("d/sub/a.txt");
          assertEquals(kept, keptBefore, "the replica's edit is kept (once per step)");
          assertEquals(status.problems, []);
        });
      }
    } finally {
      await stopPeers(replica, master);
    }
  });
});

Deno.test("a new master file whose folder the sandbox has just replaced with a file, not recorded yet: applied once the sandbox's change is settled", async () => {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    const sock = `${base}/m.sock`;
    const master = await startMaster(m, sock);
    // A long quiet time: the sandbox's change below stays unrecorded while the master's
    // file arrives (a file moved in, like a folder removed, gives no "closed" event).
    const replica = await startReplica(r, sock, { args: ["--debounce", "3000"] });
    try {
      await put(m, "d/old.txt", "inside");
      await sameTrees([m, r], [master, replica]);
      await Deno.remove(`${r}/d`, { recursive: true });
      await Deno.writeTextFile(`${base}/outside`, "a file replacing the folder");
      await Deno.rename(`${base}/outside`, `${r}/d`);
      await put(m, "d/new.txt", "new on the master");
      // The master's folder wins (it changed after the sandbox last saw it); the file
      // that replaced it is kept in the sandbox's conflicts, and the new file arrives.
      const tree = await sameTrees([m, r], [master, replica]);
      assertEquals(under(tree, "d"), ["d", "d/new.txt"]);
      const status = await writeBacksAnswered(replica);
      const kept = status.conflicts.filter((c) => c.keptHash !== null).map((c) => c.path);
      assertEquals(kept, ["d"], "the sandbox's file is kept");
      assertEquals(status.problems, []);
    } finally {
      await stopPeers(replica, master);
    }
  });
});

Deno.test("a large folder made and then removed on the master, both arriving live, is made and removed on the replica", async () => {
  await withDirs(["m", "r", "staging"], async ({ base, m, r, staging }) => {
    const sock = `${base}/m.sock`;
    const master = await startMaster(m, sock);
    const replica = await startReplica(r, sock);
    try {
      await replica.command("sync-wait 20000");
      for (let i = 0; i < 700; i++) await put(staging, `f${i}`, `file ${i}`);
      // Each a burst of changes (the replica pauses its watcher for it): the notification
      // that paused it was once queued after later ones, so the folder's removal came
      // before a file's, and the folder stayed.
      await Deno.rename(staging, `${m}/solo`);
      assertEquals(under(await sameTrees([m, r], [master, replica]), "solo").length, 701);
      await Deno.remove(`${m}/solo`, { recursive: true });
      assertEquals(under(await sameTrees([m, r], [master, replica]), "solo"), []);
      assert(replica.logs().includes("watching paused while a large change"), replica.logs());
    } finally {
      await stopPeers(replica, master);
    }
  });
});
