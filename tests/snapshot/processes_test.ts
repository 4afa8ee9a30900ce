import { createHash } from "node:crypto";
import { join } from "node:path";
import { assert, assertEquals } from "./_assert.ts";
import { withWorkspace } from "./_helpers.ts";
import { waitFor } from "../_helpers/wait_for.ts";

const WORKER = new URL("./_snapshot_worker.ts", import.meta.url).pathname;

async function runWorker(
  root: string,
  mode: string,
  paths: string[],
  env: Record<string, string> = {},
) {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", WORKER, root, mode, ...paths],
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: output.code, stderr: new TextDecoder().decode(output.stderr) };
}

Deno.test("two processes snapshotting at once never fork the chain", async () => {
  await withWorkspace(async (ws) => {
    const paths = Array.from({ length: 30 }, (_, i) => `f${i}.txt`);
    for (const path of paths) await ws.write(path, path);
    const barrier = join(ws.dataDir, "barrier");
    await Deno.mkdir(barrier);
    const env = (n: number) => ({
      READY_FILE: join(barrier, `ready-${n}`),
      GO_FILE: join(barrier, "go"),
    });
    const running = Promise.all([
      runWorker(ws.root, "append", paths.slice(0, 15), env(1)),
      runWorker(ws.root, "append", paths.slice(15), env(2)),
    ]);
    await waitFor("both workers ready", async () => {
      const names = [];
      for await (const entry of Deno.readDir(barrier)) names.push(entry.name);
      return names.length === 2;
    });
    await Deno.writeTextFile(join(barrier, "go"), "");
    const [one, two] = await running;
    assertEquals([one.code, two.code], [0, 0], one.stderr + two.stderr);
    const list = ws.snapshots.list();
    assertEquals(list.map((s) => s.number), Array.from({ length: 30 }, (_, i) => i + 1));
    assertEquals(new Set(list.map((s) => s.files[0]!.path)).size, 30);
    const report = await ws.snapshots.verify();
    assertEquals(report.problems, []);
  });
});

Deno.test("a crash between capture and record leaves no snapshot, and cleanOrphans() removes its content", async () => {
  await withWorkspace(async (ws) => {
    await ws.write("kept.txt", "kept");
    await ws.snapshots.snapshot({ type: "write_file", payload: { path: "kept.txt" } });
    const content = "captured, never recorded";
    await ws.write("lost.txt", content);
    const crashed = await runWorker(ws.root, "crash", ["lost.txt"]);
    assertEquals(crashed.code, 3, crashed.stderr);
    const orphan = createHash("sha256").update(content).digest("hex");
    assert(await ws.cas.has(orphan), "the capture did store the content");
    assertEquals(ws.snapshots.list().length, 1, "no half snapshot");
    assert((await ws.snapshots.verify()).ok);
    const result = await ws.snapshots.cleanOrphans(ws.store, { graceMs: -1000 });
    assertEquals(result.removedObjects, 1);
    assertEquals(await ws.cas.has(orphan), false);
    assertEquals((await ws.snapshots.verify()).problems, [], "referenced content survives");
    // The next snapshot links to the last recorded one.
    await ws.snapshots.snapshot({ type: "write_file", payload: { path: "lost.txt" } });
    assertEquals(ws.snapshots.list().map((s) => s.number), [1, 2]);
    await Deno.stat(join(ws.root, "lost.txt"));
  });
});
