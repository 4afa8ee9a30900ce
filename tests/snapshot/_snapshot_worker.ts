/**
 * A child process for the snapshot tests: opens a workspace's store, CAS and snapshot
 * engine and takes snapshots of `write_file` actions.
 *
 * Usage: `deno run -A _snapshot_worker.ts ROOT MODE PATH...`; MODE `append` snapshots each
 * path, `crash` exits with code 3 after capturing the first path's content and before
 * recording it (a crash between capture and record). With env `READY_FILE` and `GO_FILE`,
 * it creates the first once open and starts only when the second exists, so that several
 * workers start together.
 *
 * @module
 */
import { join } from "node:path";
import { Cas } from "../../lib/cas/mod.ts";
import { Snapshots } from "../../lib/snapshot/mod.ts";
import { Store } from "../../lib/store/mod.ts";

const [root, mode, ...paths] = Deno.args;
if (!root || (mode !== "append" && mode !== "crash")) {
  console.error("usage: _snapshot_worker.ts ROOT append|crash PATH...");
  Deno.exit(2);
}
const store = Store.open(join(root, ".chronicle", "chronicle.db"));
const cas = await Cas.open(join(root, ".chronicle", "cas"));
const snapshots = Snapshots.open({
  root,
  store,
  cas,
  afterCapture: mode === "crash" ? () => Deno.exit(3) : undefined,
});
const ready = Deno.env.get("READY_FILE");
const go = Deno.env.get("GO_FILE");
if (ready && go) {
  await Deno.writeTextFile(ready, "");
  const deadline = Date.now() + 20_000;
  while (!(await Deno.stat(go).then(() => true, () => false))) {
    if (Date.now() > deadline) throw new Error(`"${go}" never appeared`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
for (const path of paths) {
  await snapshots.snapshot({ type: "write_file", payload: { path } });
}
store.close();
