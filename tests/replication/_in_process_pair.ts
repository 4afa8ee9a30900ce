/**
 * A master on `root/m` (scanned first) and a replica on `root/r`, both in this process
 * over a real Unix socket, for tests of what the replica's applies do on its disk.
 *
 * @module
 */
import { type ReplicaHandle, startMaster, startReplica } from "../../lib/replication/mod.ts";
import { type DiskHooks, Workspace } from "../../lib/workspace/mod.ts";

/** The two sides `work` gets. */
export interface InProcessPair {
  masterSide: Workspace;
  replicaSide: Workspace;
  replica: ReplicaHandle;
}

/**
 * Runs `work` with the pair, then closes everything.
 *
 * @param root The folder holding `m/` (made by the caller, with its files) and `r/`.
 * @param options `replicaHooks` makes the replica workspace's disk hooks, given its root.
 * @param work The test.
 */
export async function withMasterAndReplica(
  root: string,
  options: { replicaHooks?: (replicaRoot: string) => DiskHooks },
  work: (pair: InProcessPair) => Promise<void>,
): Promise<void> {
  await Deno.mkdir(`${root}/r`, { recursive: true });
  const socket = `${root}/m.sock`;
  const masterSide = await Workspace.open({ root: `${root}/m` });
  await masterSide.scan();
  const master = await startMaster({ workspace: masterSide, socketPath: socket });
  const hooks = options.replicaHooks?.(`${root}/r`);
  const replicaSide = await Workspace.open({ root: `${root}/r`, ...(hooks ? { hooks } : {}) });
  const replica = await startReplica({ workspace: replicaSide, connect: socket });
  try {
    await work({ masterSide, replicaSide, replica });
  } finally {
    await replica.close();
    await master.close();
    await replicaSide.close();
    await masterSide.close();
  }
}
