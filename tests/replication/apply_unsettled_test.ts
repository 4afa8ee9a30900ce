/**
 * A master version whose path keeps changing on the replica's disk, on every attempt to
 * apply it, with nothing to record (the same bytes put back under a new inode, as an
 * editor's save does): the replica holds it back, durably, and weighs it again once the
 * path settles, on the same connection or on a next one after a restart. It is never
 * left unapplied (what the racing soak found, seed 30: "the file keeps changing on disk;
 * left as it is").
 */
import assert from "node:assert/strict";
import { startMaster, startReplica } from "../../lib/replication/mod.ts";
import {
  UNSETTLED_RETRY_MAX_MS,
  UNSETTLED_RETRY_MIN_MS,
  unsettledRetryDelay,
} from "../../lib/replication/apply_decision.ts";
import { type DiskHooks, Workspace } from "../../lib/workspace/mod.ts";
import { put, readText, withTempDir } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import { withMasterAndReplica } from "./_in_process_pair.ts";

/**
 * A hook putting the same bytes back at `root/path` (written beside it, then renamed over
 * it: a new inode) right before each write of `path`, while `armed()` says so. Each of
 * the replica's attempts then finds the file changed at its last look, and the capture
 * finds nothing new to record.
 */
function rewriteBeforeEachWrite(
  root: string,
  path: string,
  armed: () => boolean,
  onRewrite: () => void,
): NonNullable<DiskHooks["beforeCheck"]> {
  return async (changed, operation) => {
    if (changed !== path || operation !== "write" || !armed()) return;
    const bytes = await Deno.readFile(`${root}/${path}`);
    const aside = `${root}/../rewrite.tmp`; // outside the workspace: no event of its own
    await Deno.writeFile(aside, bytes);
    await Deno.rename(aside, `${root}/${path}`);
    onRewrite();
  };
}

Deno.test("a master version whose file is rewritten on every attempt is applied once the file settles, on the same connection", () =>
  withTempDir(async (root) => {
    await put(root, "m/busy.txt", "the master's v1");
    let armed = false;
    let rewrites = 0;
    const times = 5; // more than the attempts one apply makes before holding it back
    await withMasterAndReplica(root, {
      replicaHooks: (r) => ({
        beforeCheck: rewriteBeforeEachWrite(r, "busy.txt", () => armed && rewrites < times, () => {
          rewrites++;
        }),
      }),
    }, async ({ masterSide, replicaSide, replica }) => {
      await waitFor("v1 on the replica", () => replicaSide.store.latest("busy.txt"));
      armed = true;
      await masterSide.writeBytes("busy.txt", new TextEncoder().encode("the master's v2"));
      await waitFor(
        "the master's v2 on the replica",
        async () => await readText(`${root}/r/busy.txt`) === "the master's v2",
      );
      assert.equal(rewrites, times, "every rewrite was met by an attempt");
      assert.deepEqual(
        replica.status().problems.filter((p) => p.path === "busy.txt"),
        [],
        "not listed as left unapplied",
      );
      assert.equal(replica.status().pendingWriteBacks, 0, "nothing to write back");
    });
  }));

Deno.test("a master version held back because its file kept changing survives a restart, and is applied by the next connection", () =>
  withTempDir(async (root) => {
    await put(root, "m/busy.txt", "the master's v1");
    await Deno.mkdir(`${root}/r`);
    const socket = `${root}/m.sock`;
    const masterSide = await Workspace.open({ root: `${root}/m` });
    await masterSide.scan();
    const master = await startMaster({ workspace: masterSide, socketPath: socket });
    let armed = false;
    let rewrites = 0;
    const replicaSide = await Workspace.open({
      root: `${root}/r`,
      hooks: {
        beforeCheck: rewriteBeforeEachWrite(`${root}/r`, "busy.txt", () => armed, () => {
          rewrites++;
        }),
      },
    });
    let replica = await startReplica({ workspace: replicaSide, connect: socket });
    try {
      await waitFor("v1 on the replica", () => replicaSide.store.latest("busy.txt"));
      armed = true; // rewritten on every attempt until the restart
      await masterSide.writeBytes("busy.txt", new TextEncoder().encode("the master's v2"));
      const sequence = masterSide.store.sequence();
      // Held back after its attempts, and acknowledged past: the replica owes it to itself.
      await waitFor(
        "the replica past v2, v2 held back",
        () => rewrites >= 3 && replica.status().appliedSequence >= sequence,
      );
      await replica.close();
      assert.equal(await readText(`${root}/r/busy.txt`), "the master's v1", "held back");
      armed = false;
      replica = await startReplica({ workspace: replicaSide, connect: socket });
      await waitFor(
        "the master's v2 on the replica after the restart",
        async () => await readText(`${root}/r/busy.txt`) === "the master's v2",
      );
    } finally {
      await replica.close();
      await master.close();
      await replicaSide.close();
      await masterSide.close();
    }
  }));

Deno.test("unsettledRetryDelay backs off while paths keep changing, and starts again once they settled", async (t) => {
  const cases = [
    { description: "the first retry", input: [0, Infinity], expected: UNSETTLED_RETRY_MIN_MS },
    { description: "asked again right after a retry: doubled", input: [100, 3], expected: 200 },
    {
      description: "asked again within twice the last wait: doubled",
      input: [400, 800],
      expected: 800,
    },
    {
      description: "never past the longest",
      input: [UNSETTLED_RETRY_MAX_MS, 0],
      expected: UNSETTLED_RETRY_MAX_MS,
    },
    {
      description: "settled for longer than twice the last wait: the shortest again",
      input: [UNSETTLED_RETRY_MAX_MS, 2 * UNSETTLED_RETRY_MAX_MS + 1],
      expected: UNSETTLED_RETRY_MIN_MS,
    },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => {
      assert.equal(unsettledRetryDelay(input[0]!, input[1]!), expected);
    });
  }
});
