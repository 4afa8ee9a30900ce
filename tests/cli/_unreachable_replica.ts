/** Test helper: a replica in its own workspace whose every attempt to connect fails. */
import { type ReplicaHandle, startReplica } from "../../lib/replication/mod.ts";
import { Workspace } from "../../lib/workspace/mod.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

/**
 * Runs `work` with a replica on `ROOT/r` whose connector always fails with `reason` (retried
 * once a minute at most), then closes both.
 *
 * @param reason What each attempt to connect fails with.
 * @param work Given the temp root, the replica's workspace and the replica.
 * @param prefix The temp folder's name prefix.
 */
export function withUnreachableReplica(
  reason: string,
  work: (root: string, workspace: Workspace, replica: ReplicaHandle) => Promise<void>,
  prefix?: string,
): Promise<void> {
  return withTempDir(async (root) => {
    await Deno.mkdir(`${root}/r`);
    const workspace = await Workspace.open({ root: `${root}/r` });
    const replica = await startReplica({
      workspace,
      connector: () => Promise.reject(new Error(reason)),
      backoffMinMs: 60_000,
      backoffMaxMs: 60_000,
    });
    try {
      await work(root, workspace, replica);
    } finally {
      await replica.close();
      await workspace.close();
    }
  }, prefix);
}
