import assert from "node:assert/strict";
import { connectUnix, startMaster, startReplica } from "../../lib/replication/mod.ts";
import { Workspace } from "../../lib/workspace/mod.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

/** Settles with `promise`, or rejects once `ms` have passed. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

Deno.test("a replica closed while it is still connecting ends, and never starts a session", () =>
  withTempDir(async (root) => {
    await Deno.mkdir(`${root}/m`);
    await Deno.mkdir(`${root}/r`);
    const socket = `${root}/m.sock`;
    const masterSide = await Workspace.open({ root: `${root}/m` });
    const master = await startMaster({ workspace: masterSide, socketPath: socket });
    const replicaSide = await Workspace.open({ root: `${root}/r` });
    try {
      let connectCalled!: () => void;
      const connecting = new Promise<void>((resolve) => connectCalled = resolve);
      let letConnect!: () => void;
      const gate = new Promise<void>((resolve) => letConnect = resolve);
      const replica = await startReplica({
        workspace: replicaSide,
        connector: async () => {
          connectCalled();
          await gate; // the connection completes only after close() was called
          return await connectUnix(socket);
        },
      });
      await connecting;
      const closing = replica.close();
      letConnect();
      await within(closing, 10_000, "closing the replica");
      assert.equal(master.status().replicas.length, 0, "no session was started");
      // Exact where the line above may be early: the count rises only when a session starts.
      assert.equal(replica.status().connections, 0, "no session was started");
    } finally {
      await master.close();
      await replicaSide.close();
      await masterSide.close();
    }
  }));
