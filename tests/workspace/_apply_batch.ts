/**
 * Applies a batch of new files to a workspace, for a test that runs it under chosen
 * permissions: `deno run … _apply_batch.ts ROOT COUNT [originals]`: copies (`visibleFirst`)
 * unless `originals` is given. Prints
 * `{"fileSystemSync":…,"recorded":…,"failed":…}`.
 *
 * @module
 */
import { syncFileSystem } from "../../lib/disk/mod.ts";
import { Workspace } from "../../lib/workspace/mod.ts";

const [root, count, kind] = Deno.args;
const workspace = await Workspace.open({ root: root! });
try {
  const changes = [];
  for (let i = 0; i < Number(count); i++) {
    const { hash } = await workspace.cas.putBytes(new TextEncoder().encode(`file ${i}`));
    changes.push({ path: `batch/${i % 5}/f${i}.txt`, hash, mode: 0o644 });
  }
  const { recorded, failed } = await workspace.applyChanges(changes, {
    visibleFirst: kind !== "originals",
  });
  console.log(JSON.stringify({
    fileSystemSync: await syncFileSystem(root!),
    recorded: recorded.length,
    failed: failed.length,
  }));
} finally {
  await workspace.close();
}
