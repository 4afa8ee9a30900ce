/**
 * The replica's session driver, driven by a test: a fake clock (no real timer in the
 * session), real Unix sockets, SQLite and folders. The watchdog and barrier deadlines
 * fire when the test moves the clock, not after real time.
 */
import assert from "node:assert/strict";
import { connectUnix, listenUnix, startMaster, type Transport } from "../../lib/replication/mod.ts";
import { ReplicaCore } from "../../lib/replication/replica_core.ts";
import { ReplicaSession } from "../../lib/replication/replica_session.ts";
import { ManualClock } from "../_helpers/manual_clock.ts";
import type { NotificationMessage, WireMessage } from "../../lib/wire/mod.ts";
import { Workspace } from "../../lib/workspace/mod.ts";
import { sha256Hex } from "../../lib/cas/mod.ts";
import { put, readText, withTempDir } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";

/**
 * Runs `work` with a master that records what the replica sends and answers nothing, and
 * a replica session on `root/r` driven by a fake clock.
 */
async function withSilentMaster(
  root: string,
  work: (
    session: ReplicaSession,
    clock: ManualClock,
    heard: WireMessage[],
    ended: Promise<{ reachedLive: boolean; reason: string }>,
    core: ReplicaCore,
  ) => Promise<void>,
  options: { keepMasterContent?: boolean } = {},
): Promise<void> {
  await Deno.mkdir(`${root}/r`);
  const heard: WireMessage[] = [];
  const server = await listenUnix({
    path: `${root}/m.sock`,
    onTransport: async (master: Transport) => {
      try {
        for await (const msg of master.messages()) heard.push(msg);
      } catch {
        master.close(); // the replica ended the connection
      }
    },
  });
  const workspace = await Workspace.open({ root: `${root}/r` });
  const clock = new ManualClock();
  // Heartbeats every 200 ms: a master silent for 3 s (the least) is left.
  const core = new ReplicaCore({ workspace, heartbeatMs: 200, ...options });
  const session = new ReplicaSession(core, await connectUnix(`${root}/m.sock`), { clock });
  const ended = session.run();
  try {
    await work(session, clock, heard, ended, core);
  } finally {
    session.close("test done");
    await ended;
    await server.close();
    await workspace.close();
  }
}

/**
 * A notification of `big.txt` at `sequence`, 10,000 times `letter`: too large to come inline,
 * so the replica asks for its content (which a silent master never sends).
 */
function fetchedFile(sequence: bigint, letter: string): NotificationMessage {
  const content = new TextEncoder().encode(letter.repeat(10_000));
  return {
    type: "Notification",
    sequence,
    filepath: "big.txt",
    content_hash: sha256Hex(content),
    size: BigInt(content.length),
    permissions: 0o100644n,
    is_deletion: false,
    inline_content: null,
  };
}

Deno.test("the session's watchdog leaves a silent master when the clock says so, not before", () =>
  withTempDir((root) =>
    withSilentMaster(root, async (session, clock, heard, ended) => {
      await waitFor("the probe and the catch-up request", () => heard.length === 2);
      assert.deepEqual(heard.map((msg) => msg.type), ["BarrierRequest", "CatchupRequest"]);
      // The timers fire, and the state machine decides, within `advance`.
      clock.advance(3000); // silent for 3000 ms: not more than the limit
      assert.equal(session.closeReason, null);
      assert.equal(session.state, "syncing");
      clock.advance(1000);
      assert.equal(session.closeReason, "master silent for more than 3000 ms");
      const { reason, reachedLive } = await ended;
      assert.equal(reason, "master silent for more than 3000 ms");
      assert.equal(reachedLive, false);
    })
  ));

Deno.test("a barrier unanswered by its deadline resolves to nothing when the clock passes it", () =>
  withTempDir((root) =>
    withSilentMaster(root, async (session, clock, heard) => {
      await waitFor("the catch-up request", () => heard.length === 2);
      const barrier = session.barrier(clock.now() + 500);
      // A barrier settled within `advance` wins the race against one resolved after it.
      const settled = async () =>
        await Promise.race([barrier, Promise.resolve("pending" as const)]) !== "pending";
      await waitFor("the barrier's request", () => heard.length === 3);
      assert.equal(heard[2]!.type, "BarrierRequest");
      clock.advance(499);
      assert.equal(await settled(), false);
      clock.advance(1);
      assert.equal(await settled(), true);
      assert.equal(await barrier, null);
    })
  ));

Deno.test("step() feeds the state machine: a notification leaving the workspace ends the connection", () =>
  withTempDir((root) =>
    withSilentMaster(root, async (session, clock, _heard, ended) => {
      const escaping: NotificationMessage = {
        type: "Notification",
        sequence: 1n,
        filepath: "../outside.txt",
        content_hash: "",
        size: 0n,
        permissions: 0o100644n,
        is_deletion: true,
        inline_content: null,
      };
      session.step({ type: "message", message: escaping, now: clock.now() });
      assert.equal(
        (await ended).reason,
        'notification for a path leaving the workspace: "../outside.txt"',
      );
      await assert.rejects(Deno.lstat(`${root}/outside.txt`), Deno.errors.NotFound);
    })
  ));

Deno.test("a notification weighed for a prefetch as it arrived is not weighed again when its batch is applied (a replica keeping copies)", () =>
  withTempDir((root) =>
    withSilentMaster(root, async (session, clock, heard, _ended, core) => {
      // Spies on the store: the prefetch looks the path up alone, the applier with its batch.
      const looked: string[] = [];
      const batches: string[][] = [];
      const { store } = core;
      const latest = store.latest.bind(store);
      const latestOf = store.latestOf.bind(store);
      store.latest = (path) => (looked.push(path), latest(path));
      store.latestOf = (paths) => (batches.push([...paths]), latestOf(paths));
      session.step({ type: "message", message: fetchedFile(1n, "x"), now: clock.now() });
      await waitFor("the content asked for", () =>
        heard.some((msg) => msg.type === "ContentFetchRequest"));
      await waitFor("the applier to take the batch", () =>
        batches.some((paths) =>
          paths.includes("big.txt")
        ));
      // Weighed once as it arrived; the applier's own fetch joins the one under way.
      assert.deepEqual(
        looked.filter((path) =>
          path === "big.txt"
        ),
        ["big.txt"],
      );
      assert.equal(heard.filter((msg) => msg.type === "ContentFetchRequest").length, 1);
    }, { keepMasterContent: true })
  ));

Deno.test("a notification received and not yet applied counts as where the master is, for the status's lag", () =>
  withTempDir((root) =>
    withSilentMaster(root, async (session, clock, heard, _ended, core) => {
      await waitFor("the catch-up request", () => heard.length === 2);
      session.step({ type: "message", message: fetchedFile(40n, "y"), now: clock.now() });
      // The silent master never sends the content: nothing is applied, and the master is
      // known to be at 40 at least.
      await waitFor("the content asked for", () =>
        heard.some((msg) => msg.type === "ContentFetchRequest"));
      assert.equal(core.applied, 0);
      assert.equal(core.masterSequence, 40);
    })
  ));

Deno.test("a session driven by a fake clock syncs from a real master, and its barrier certifies it", () =>
  withTempDir(async (root) => {
    await put(root, "m/a.txt", "from the master");
    await put(root, "m/sub/b.txt", "inside a folder");
    await Deno.mkdir(`${root}/r`);
    const masterSide = await Workspace.open({ root: `${root}/m` });
    await masterSide.scan();
    const master = await startMaster({ workspace: masterSide, socketPath: `${root}/m.sock` });
    const workspace = await Workspace.open({ root: `${root}/r` });
    const core = new ReplicaCore({ workspace });
    const clock = new ManualClock();
    const session = new ReplicaSession(core, await connectUnix(`${root}/m.sock`), { clock });
    const ended = session.run();
    try {
      await waitFor("the session live", () => session.state === "live");
      const result = await session.barrier(clock.now() + 60_000);
      const current = master.status().sequence;
      assert.deepEqual(result, {
        satisfied: true,
        masterSequence: current,
        appliedSequence: current,
      });
      assert.equal(await readText(`${root}/r/a.txt`), "from the master");
      assert.equal(await readText(`${root}/r/sub/b.txt`), "inside a folder");
      assert.equal(workspace.store.latest("sub/b.txt")?.origin, "master");
      assert.equal(core.applied, current);
      await masterSide.writeBytes("c.txt", new TextEncoder().encode("live"));
      await waitFor(
        "the live write on the replica",
        async () => await readText(`${root}/r/c.txt`) === "live" && core.applied > current,
      );
    } finally {
      session.close("test done");
      assert.equal((await ended).reason, "test done");
      await master.close();
      await workspace.close();
      await masterSide.close();
    }
    // The applied position is durable: a new replica on this folder starts from it.
    const reopened = await Workspace.open({ root: `${root}/r` });
    try {
      assert.ok(new ReplicaCore({ workspace: reopened }).applied > 0);
    } finally {
      await reopened.close();
    }
  }));
