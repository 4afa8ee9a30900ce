import assert from "node:assert/strict";
import {
  listenUnix,
  openReplicaTables,
  type ReplicaHandle,
  type ReplicaPaths,
  startReplica,
  type Transport,
} from "../../lib/replication/mod.ts";
import type {
  BarrierConfirmationMessage,
  ContentFetchResponseMessage,
  HeartbeatMessage,
  NotificationMessage,
  WriteBackMessage,
  WriteBackResultMessage,
} from "../../lib/wire/mod.ts";
import { Workspace } from "../../lib/workspace/mod.ts";
import { put, readText, withTempDir } from "../_helpers/temp_dir.ts";
import { sha256OfText } from "../_helpers/text_hash.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import { withMasterAndReplica } from "./_in_process_pair.ts";

Deno.test("a file found where the master's new file goes is recorded and kept, never overwritten unseen", () =>
  withTempDir(async (root) => {
    await put(root, "m/shared.txt", "the master's");
    await put(root, "m/other.txt", "only on the master");
    // On the replica's disk, never scanned nor watched: nothing records it but the apply.
    await put(root, "r/shared.txt", "the sandbox's own");
    await withMasterAndReplica(root, {}, async ({ replicaSide, replica }) => {
      // The sandbox's file goes to the master as a write-back, which conflicts; the
      // sandbox then takes the master's version and keeps its own in the conflict list.
      const conflict = await waitFor(
        "the conflict to be listed",
        () => replica.status().conflicts.find((c) => c.path === "shared.txt"),
      );
      assert.equal(conflict.keptHash, sha256OfText("the sandbox's own"));
      assert.equal(
        new TextDecoder().decode(await replicaSide.cas.readBytes(conflict.keptHash!)),
        "the sandbox's own",
      );
      await waitFor(
        "the master's files on the replica",
        async () =>
          await readText(`${root}/r/shared.txt`) === "the master's" &&
          await readText(`${root}/r/other.txt`) === "only on the master",
      );
      assert.equal(await readText(`${root}/m/shared.txt`), "the master's");
    });
  }));

Deno.test("files found holding versions the replica was writing when it stopped are those versions, applied", () =>
  withTempDir(async (root) => {
    const text = (s: string) => new TextEncoder().encode(s);
    await put(root, "r/fresh.txt", "the master's v5");
    await put(root, "r/stale.txt", "the master's v5");
    await put(root, "r/edited.txt", "edited after the crash");
    const workspace = await Workspace.open({ root: `${root}/r` });
    const hash = (await workspace.cas.putBytes(text("the master's v5"))).hash;
    const version = { sequence: 5, hash, mode: 0o100644, deleted: false };
    // As a replica killed mid-batch leaves them: noted, written, never recorded. A later
    // version of stale.txt was applied since (its note is left from a failed write).
    const tables = openReplicaTables(workspace.store.db);
    tables.intents.begin(
      ["fresh.txt", "stale.txt", "edited.txt"].map((path) => ({ path, version })),
    );
    tables.paths.setApplied("stale.txt", { ...version, sequence: 9 });
    await workspace.scan(); // the restart's scan: three local creations
    const replica = await startReplica({ workspace, connect: `${root}/no-master.sock` });
    try {
      assert.deepEqual(tables.paths.get("fresh.txt").applied, version);
      const journaled = tables.journal.list("pending").map((entry) => entry.path).sort();
      assert.deepEqual(journaled, ["edited.txt", "stale.txt"]);
    } finally {
      await replica.close();
      await workspace.close();
    }
  }));

Deno.test("a write through the replica's own API is written back, like a change found on disk", () =>
  withTempDir(async (root) => {
    await put(root, "m/seed.txt", "seed");
    await withMasterAndReplica(root, {}, async ({ replicaSide }) => {
      await waitFor("the seed on the replica", async () => await readText(`${root}/r/seed.txt`));
      // As `PUT /files/via-api.txt` on a replica daemon does: recorded, never captured.
      await replicaSide.writeBytes("via-api.txt", new TextEncoder().encode("through the API"));
      await waitFor(
        "the write on the master",
        async () => await readText(`${root}/m/via-api.txt`) === "through the API",
      );
    });
  }));

const text = (t: string) => new TextEncoder().encode(t);

/** A master's notification of `content` at `filepath`, with `inline` as its inline bytes. */
function notification(
  sequence: number,
  filepath: string,
  mode: number,
  content: string,
  inline = content,
): NotificationMessage {
  return {
    type: "Notification",
    sequence: BigInt(sequence),
    filepath,
    content_hash: sha256OfText(content),
    size: BigInt(text(content).length),
    permissions: BigInt(mode),
    is_deletion: false,
    inline_content: text(inline),
  };
}

function heartbeat(sequence: number): HeartbeatMessage {
  return {
    type: "Heartbeat",
    agent_sequence: BigInt(sequence),
    agent_iteration: BigInt(sequence),
  };
}

function barrierConfirmation(sequence: number): BarrierConfirmationMessage {
  return { type: "BarrierConfirmation", satisfied: true, current_sequence: BigInt(sequence) };
}

function fetchResponse(hash: string, content: Uint8Array): ContentFetchResponseMessage {
  return {
    type: "ContentFetchResponse",
    content_hash: hash,
    content,
    size: BigInt(content.length),
    chunk_manifest: null,
  };
}

/** The master's answer to `msg`: its entry for `f` rejected as a conflict. */
function conflictOnF(msg: WriteBackMessage): WriteBackResultMessage {
  const entry = msg.entries.find((e) => e.filepath === "f")!;
  return {
    type: "WriteBackResult",
    accepted: [],
    rejected: [[entry.local_seq, 'conflict: "f" changed at sequence 2 by "local" after 1']],
  };
}

/**
 * Runs `work` with a scripted master on `root/m.sock` (each connection runs `script`) and
 * a replica on `root/r`, in process.
 */
async function withScriptedMaster(
  root: string,
  script: (master: Transport) => Promise<void>,
  work: (workspace: Workspace, replica: ReplicaHandle) => Promise<void>,
  options: { backoffMinMs?: number } = {},
): Promise<void> {
  await Deno.mkdir(`${root}/r`);
  // The replica ends connections too (reconnecting, closing): a reset read ends the script.
  const server = await listenUnix({
    path: `${root}/m.sock`,
    onTransport: (master) => script(master).catch(() => master.close()),
  });
  const workspace = await Workspace.open({ root: `${root}/r` });
  const replica = await startReplica({ workspace, connect: `${root}/m.sock`, ...options });
  try {
    await work(workspace, replica);
  } finally {
    await replica.close();
    await server.close();
    await workspace.close();
  }
}

/** Waits for the master's file `f` on the replica, then edits it there. */
async function editF(root: string, workspace: Workspace): Promise<void> {
  await waitFor(
    "f on the replica, recorded",
    async () =>
      await readText(`${root}/r/f`) === "a file" && workspace.store.history("f").length > 0,
  );
  await workspace.writeBytes("f", text("edited on the replica"));
}

Deno.test("inline content that does not hash to its notification's hash is never written: the real bytes are fetched", () =>
  withTempDir(async (root) => {
    const real = "the master's real content";
    const hash = sha256OfText(real);
    let fetches = 0;
    // A master that sends one notification with the wrong bytes inline, and answers the
    // fetch that follows with the right ones.
    const script = async (master: Transport) => {
      for await (const msg of master.messages()) {
        if (msg.type === "BarrierRequest") {
          await master.send(barrierConfirmation(1));
        } else if (msg.type === "CatchupRequest") {
          await master.send(notification(1, "a.txt", 0o100644, real, "tampered on the way"));
          await master.send(heartbeat(1));
        } else if (msg.type === "ContentFetchRequest") {
          fetches++;
          await master.send(fetchResponse(msg.content_hash, text(real)));
        }
      }
    };
    await withScriptedMaster(root, script, async (workspace) => {
      // A copy is renamed into place before it is recorded (visibleFirst): wait for both.
      await waitFor(
        "the real content on the replica, recorded",
        async () =>
          await readText(`${root}/r/a.txt`) === "the master's real content" &&
          workspace.store.history("a.txt").length > 0,
      );
      assert.equal(fetches, 1);
      assert.deepEqual(workspace.store.history("a.txt").map((it) => it.hash), [hash]);
    });
  }));

Deno.test("what a folder holds, arriving after the master's answer to the file the replica wrote there but before its release, waits for that release", () =>
  withTempDir(async (root) => {
    let paths: ReplicaPaths | undefined;
    let answer: WriteBackResultMessage | undefined;
    // A master that replaced file `f` by a folder holding `f/sub/x` while the replica
    // edited `f`, and sends its messages in this order: `f`'s folder (held back behind
    // the replica's write-back); a file whose inline bytes are wrong, so that the replica
    // asks for them while it applies it; then, before answering that, `f/sub` and
    // `f/sub/x` and the conflict answering the write-back of `f`. The replica reads the
    // answer at once but runs `f`'s release only after `f/sub` and `f/sub/x`.
    const script = async (master: Transport) => {
      let current = 0;
      for await (const msg of master.messages()) {
        if (msg.type === "BarrierRequest") {
          await master.send(barrierConfirmation(current));
        } else if (msg.type === "CatchupRequest") {
          await master.send(notification(1, "f", 0o100644, "a file"));
          await master.send(heartbeat(current = 1));
        } else if (msg.type === "WriteBack") {
          answer = conflictOnF(msg);
          await master.send(notification(2, "f", 0o040755, ""));
          await waitFor(
            "the master's folder f held back",
            () => paths!.get("f").deferred?.sequence === 2,
          );
          await master.send(notification(3, "other.txt", 0o100644, "the real bytes", "tampered"));
          current = 3;
        } else if (msg.type === "ContentFetchRequest") {
          await master.send(notification(4, "f/sub", 0o040755, ""));
          await master.send(notification(5, "f/sub/x", 0o100644, "inside"));
          await master.send(answer!);
          await master.send(fetchResponse(msg.content_hash, text("the real bytes")));
          await master.send(heartbeat(current = 5));
        }
      }
    };
    await withScriptedMaster(root, script, async (workspace, replica) => {
      paths = openReplicaTables(workspace.store.db).paths;
      await editF(root, workspace);
      await waitFor("the master's folder on the replica, with what it holds", async () =>
        // Read while f may still be a file: no such path yet.
        await Deno.readTextFile(`${root}/r/f/sub/x`).catch(() => null) === "inside" &&
        workspace.store.latest("f/sub/x") !== undefined);
      const status = replica.status();
      assert.deepEqual(status.problems, []);
      assert.deepEqual(status.conflicts.map((c) => [c.path, c.keptHash]), [
        ["f", sha256OfText("edited on the replica")],
      ]);
      assert.equal((await Deno.stat(`${root}/r/f/sub`)).isDirectory, true);
    });
  }));

Deno.test("a version held back behind a write-back answered on a connection that ended before its release is released on the next one", () =>
  withTempDir(async (root) => {
    let paths: ReplicaPaths | undefined;
    let answer: WriteBackResultMessage | undefined;
    let connections = 0;
    // First connection: `f`, then (once the replica wrote `f`) the master's folder `f`,
    // held back; a file with wrong inline bytes, whose fetch is never answered; the
    // conflict answering `f`; and the connection ends before the release could run. The
    // next connection carries nothing new for `f`.
    const script = async (master: Transport) => {
      const connection = ++connections;
      for await (const msg of master.messages()) {
        if (msg.type === "BarrierRequest") {
          await master.send(barrierConfirmation(connection === 1 ? 1 : 3));
        } else if (msg.type === "CatchupRequest" && connection === 1) {
          await master.send(notification(1, "f", 0o100644, "a file"));
          await master.send(heartbeat(1));
        } else if (msg.type === "CatchupRequest") {
          await master.send(heartbeat(3));
        } else if (msg.type === "WriteBack" && connection === 1) {
          answer = conflictOnF(msg);
          await master.send(notification(2, "f", 0o040755, ""));
          await waitFor(
            "the master's folder f held back",
            () => paths!.get("f").deferred?.sequence === 2,
          );
          await master.send(notification(3, "other.txt", 0o100644, "the real bytes", "tampered"));
        } else if (msg.type === "ContentFetchRequest" && connection === 1) {
          await master.send(answer!);
          master.close();
        } else if (msg.type === "ContentFetchRequest") {
          await master.send(fetchResponse(msg.content_hash, text("the real bytes")));
        }
      }
    };
    await withScriptedMaster(root, script, async (workspace, replica) => {
      paths = openReplicaTables(workspace.store.db).paths;
      await editF(root, workspace);
      await waitFor(
        "the master's folder f on the replica",
        async () =>
          (await Deno.stat(`${root}/r/f`)).isDirectory && paths!.get("f").deferred === null,
      );
      // The release runs first on the next connection, the carried other.txt after it.
      await waitFor(
        "other.txt fetched and written",
        async () => await readText(`${root}/r/other.txt`) === "the real bytes",
      );
      assert.ok(connections >= 2);
      assert.deepEqual(replica.status().problems, []);
    }, { backoffMinMs: 10 });
  }));

/** A master's notification that `filepath` was removed. */
function deletion(sequence: number, filepath: string): NotificationMessage {
  return {
    type: "Notification",
    sequence: BigInt(sequence),
    filepath,
    content_hash: "",
    size: 0n,
    permissions: 0n,
    is_deletion: true,
    inline_content: null,
  };
}

/** The master's answer to `msg`: every entry rejected as a conflict. */
function allConflicts(msg: WriteBackMessage): WriteBackResultMessage {
  return {
    type: "WriteBackResult",
    accepted: [],
    rejected: msg.entries.map((e) => [e.local_seq, `conflict: "${e.filepath}" removed`]),
  };
}

Deno.test("a folder the master removed goes once the replica's edit inside and its own mode change are both settled, the edit's first", () =>
  withTempDir(async (root) => {
    let paths: ReplicaPaths | undefined;
    let first: WriteBackMessage | undefined;
    // A master that removed folder `d` (and `d/a.txt` in it) while the replica edited
    // `d/a.txt`, then changed `d`'s mode. The removal of `d/a.txt` is held back behind the
    // edit; `d` is kept (it holds `d/a.txt`) and then held behind its mode change. The
    // edit's conflict is released first, while `d`'s answer waits its turn: `d/a.txt`
    // stays held back behind `d`. `d`'s release then removes `d/a.txt`, and `d` with it.
    const script = async (master: Transport) => {
      for await (const msg of master.messages()) {
        if (msg.type === "BarrierRequest") {
          await master.send(barrierConfirmation(first ? 4 : 2));
        } else if (msg.type === "CatchupRequest" && first) {
          await master.send(heartbeat(4)); // a later connection: nothing new
        } else if (msg.type === "CatchupRequest") {
          await master.send(notification(1, "d", 0o040755, ""));
          await master.send(notification(2, "d/a.txt", 0o100644, "a file"));
          await master.send(heartbeat(2));
        } else if (msg.type === "WriteBack" && !first) {
          first = msg; // the edit: answered with the mode change
          await master.send(deletion(3, "d/a.txt"));
          await master.send(deletion(4, "d"));
        } else if (msg.type === "WriteBack") {
          await master.send(allConflicts(first!));
          await master.send(allConflicts(msg));
          await master.send(heartbeat(4));
        }
      }
    };
    await withScriptedMaster(root, script, async (workspace, replica) => {
      paths = openReplicaTables(workspace.store.db).paths;
      await waitFor(
        "d/a.txt on the replica, recorded",
        async () =>
          await readText(`${root}/r/d/a.txt`) === "a file" &&
          workspace.store.history("d/a.txt").length > 0,
      );
      await workspace.writeBytes("d/a.txt", text("edited on the replica"));
      await waitFor(
        "the removals decided: d/a.txt held back, d kept",
        () =>
          paths!.get("d/a.txt").deferred?.sequence === 3 && paths!.get("d").applied.sequence === 4,
      );
      await workspace.chmod("d", 0o700);
      await waitFor(
        "d and d/a.txt gone from the replica, recorded",
        async () =>
          await Deno.stat(`${root}/r/d`).then(() => false, () => true) &&
          workspace.store.latest("d")?.deleted === true,
      );
      assert.deepEqual(replica.status().conflicts.map((c) => c.path).sort(), ["d", "d/a.txt"]);
      assert.deepEqual(replica.status().problems, []);
    });
  }));

Deno.test("a conflict answered on a connection that ended before its release still takes the master's version back on the next one", () =>
  withTempDir(async (root) => {
    let connections = 0;
    // First connection: `f`; once the replica wrote `f`, a file with wrong inline bytes
    // whose fetch is never answered (the release waits behind it), the conflict answering
    // `f`, and the connection ends. The master's `f` is the version the replica applied
    // already (as for the target of a rejected rename): nothing new for `f` comes again.
    const script = async (master: Transport) => {
      const connection = ++connections;
      for await (const msg of master.messages()) {
        if (msg.type === "BarrierRequest") {
          await master.send(barrierConfirmation(connection === 1 ? 1 : 2));
        } else if (msg.type === "CatchupRequest" && connection === 1) {
          await master.send(notification(1, "f", 0o100644, "a file"));
          await master.send(heartbeat(1));
        } else if (msg.type === "CatchupRequest") {
          await master.send(heartbeat(2));
        } else if (msg.type === "WriteBack" && connection === 1) {
          await master.send(notification(2, "other.txt", 0o100644, "the real bytes", "tampered"));
          await master.send(conflictOnF(msg));
        } else if (msg.type === "ContentFetchRequest" && connection === 1) {
          master.close();
        } else if (msg.type === "ContentFetchRequest") {
          // The master's `f` too: a sandbox replica keeps no copy of what it wrote.
          const content = ["the real bytes", "a file"]
            .find((held) => sha256OfText(held) === msg.content_hash)!;
          await master.send(fetchResponse(msg.content_hash, text(content)));
        }
      }
    };
    await withScriptedMaster(root, script, async (workspace, replica) => {
      await editF(root, workspace);
      await waitFor(
        "other.txt fetched and written on a later connection",
        async () => await readText(`${root}/r/other.txt`) === "the real bytes",
      );
      await waitFor(
        "the master's f back on the replica, recorded",
        async () =>
          await readText(`${root}/r/f`) === "a file" &&
          workspace.store.latest("f")?.hash === sha256OfText("a file"),
      );
      assert.ok(connections >= 2);
      assert.deepEqual(replica.status().conflicts.map((c) => [c.path, c.keptHash]), [
        ["f", sha256OfText("edited on the replica")],
      ]);
      assert.deepEqual(replica.status().problems, []);
    }, { backoffMinMs: 10 });
  }));

Deno.test("a rename the master accepted leaves its source removed as the master's: a later conflict at that path takes the removal back", () =>
  withTempDir(async (root) => {
    let paths: ReplicaPaths | undefined;
    let renames = 0;
    // The replica renames `f` to `g`: accepted, the master's answer naming the sequence of
    // `g` (3), after the removal of `f` (2). The replica then renames `g` back to `f`,
    // while the master changed `g`: a conflict. The master has no `f`.
    const script = async (master: Transport) => {
      for await (const msg of master.messages()) {
        if (msg.type === "BarrierRequest") {
          await master.send(barrierConfirmation(renames === 0 ? 1 : renames === 1 ? 3 : 4));
        } else if (msg.type === "CatchupRequest" && renames === 0) {
          await master.send(notification(1, "f", 0o100644, "a file"));
          await master.send(heartbeat(1));
        } else if (msg.type === "CatchupRequest") {
          await master.send(heartbeat(renames === 1 ? 3 : 4));
        } else if (msg.type === "WriteBack" && ++renames === 1) {
          await master.send({
            type: "WriteBackResult",
            accepted: [[msg.entries[0]!.local_seq, 3n]],
            rejected: [],
          });
          await master.send(deletion(2, "f"));
          await master.send(notification(3, "g", 0o100644, "a file"));
          await master.send(heartbeat(3));
        } else if (msg.type === "WriteBack") {
          await master.send(notification(4, "g", 0o100644, "the master's g"));
          await master.send(allConflicts(msg));
          await master.send(heartbeat(4));
        }
      }
    };
    await withScriptedMaster(root, script, async (workspace, replica) => {
      paths = openReplicaTables(workspace.store.db).paths;
      await waitFor(
        "f on the replica, recorded",
        async () =>
          await readText(`${root}/r/f`) === "a file" && workspace.store.history("f").length > 0,
      );
      await workspace.move("f", "g");
      await waitFor("the master's g applied", () => paths!.get("g").applied.sequence === 3);
      await workspace.move("g", "f");
      await waitFor(
        "the master's g back and f gone, recorded",
        async () =>
          await readText(`${root}/r/g`) === "the master's g" &&
          await Deno.stat(`${root}/r/f`).then(() => false, () => true) &&
          workspace.store.latest("f")?.deleted === true,
      );
      assert.deepEqual(replica.status().problems, []);
    });
  }));

Deno.test("a folder the master removed goes once a release empties it, even when a later release of the same answer is cut short", () =>
  withTempDir(async (root) => {
    let connections = 0;
    const entries: WriteBackMessage["entries"] = [];
    // The master removed `d` and `d/a.txt` while the replica edited `d/a.txt` and then
    // `e/z.txt`: `d/a.txt`'s removal is held back behind the edit, and `d` is kept (it
    // holds `d/a.txt`). One answer rejects both edits. Its release removes `d/a.txt`, then
    // fetches the master's `e/z.txt` back, and the connection ends before that fetch is
    // answered: `d`, emptied, must still go (before, nothing looked at it again).
    const script = async (master: Transport) => {
      const connection = ++connections;
      for await (const msg of master.messages()) {
        if (msg.type === "BarrierRequest") {
          await master.send(barrierConfirmation(connection === 1 ? 4 : 6));
        } else if (msg.type === "CatchupRequest" && connection === 1) {
          await master.send(notification(1, "d", 0o040755, ""));
          await master.send(notification(2, "d/a.txt", 0o100644, "a file"));
          await master.send(notification(3, "e", 0o040755, ""));
          await master.send(notification(4, "e/z.txt", 0o100644, "z file"));
          await master.send(heartbeat(4));
        } else if (msg.type === "CatchupRequest") {
          await master.send(heartbeat(6));
        } else if (msg.type === "WriteBack" && connection === 1) {
          entries.push(...msg.entries);
          const paths = entries.map((entry) => entry.filepath);
          if (!paths.includes("d/a.txt") || !paths.includes("e/z.txt")) continue;
          await master.send(deletion(5, "d/a.txt"));
          await master.send(deletion(6, "d"));
          await master.send(heartbeat(6));
          await master.send(allConflicts({ ...msg, entries }));
        } else if (msg.type === "ContentFetchRequest" && connection === 1) {
          master.close(); // the master's e/z.txt, for the release: cut short
        } else if (msg.type === "ContentFetchRequest") {
          await master.send(fetchResponse(msg.content_hash, text("z file")));
        }
      }
    };
    await withScriptedMaster(root, script, async (workspace, replica) => {
      const paths = openReplicaTables(workspace.store.db).paths;
      await waitFor(
        "the master's files on the replica, recorded",
        async () =>
          await readText(`${root}/r/e/z.txt`) === "z file" &&
          workspace.store.history("e/z.txt").length > 0 &&
          workspace.store.history("d/a.txt").length > 0,
      );
      await workspace.writeBytes("d/a.txt", text("edited on the replica"));
      await workspace.writeBytes("e/z.txt", text("z edited on the replica"));
      await waitFor("d kept, holding d/a.txt", () => paths.get("d").applied.sequence === 6);
      await waitFor(
        "d and d/a.txt gone, and the master's e/z.txt back, on a later connection",
        async () =>
          await Deno.stat(`${root}/r/d`).then(() => false, () => true) &&
          await readText(`${root}/r/e/z.txt`) === "z file",
      );
      assert.ok(connections >= 2);
      assert.deepEqual(replica.status().conflicts.map((c) => c.path).sort(), [
        "d/a.txt",
        "e/z.txt",
      ]);
      assert.deepEqual(replica.status().problems, []);
    }, { backoffMinMs: 10 });
  }));
