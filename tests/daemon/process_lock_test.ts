/**
 * The data folder's process lock: held while a Chronicle runs there, dropped by the system
 * when its process ends however it ends, so a second Chronicle is refused and `chronicle
 * stop` knows when the process is gone (the binaries cannot ask /proc or send signals).
 */
import { match, ok, strictEqual, throws } from "node:assert/strict";
import { join } from "node:path";
import { ProcessLock, processLockHeld, WorkspaceBusyError } from "../../lib/daemon/mod.ts";
import { controlJson } from "../_helpers/control_socket.ts";
import { runChronicle, spawnChronicle } from "../_helpers/processes.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";

/** A process that takes the lock of `dataDir` through the module and waits to be killed. */
function holder(dataDir: string): Deno.ChildProcess {
  const script = `
    import { ProcessLock } from ${
    JSON.stringify(new URL("../../lib/daemon/mod.ts", import.meta.url).href)
  };
    ProcessLock.acquire(${JSON.stringify(dataDir)});
    console.log("held");
    setInterval(() => {}, 1000);
  `;
  return new Deno.Command(Deno.execPath(), {
    args: ["eval", "--quiet", script],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

Deno.test("the process lock is held while its process runs and free once it is killed with SIGKILL", async () => {
  await withTempDir(async (dir) => {
    strictEqual(processLockHeld(dir), false, "no lock file: nobody holds it");
    const child = holder(dir);
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    try {
      strictEqual((await reader.read()).value?.trim(), "held");
      strictEqual(processLockHeld(dir), true);
      throws(
        () => ProcessLock.acquire(dir),
        (error) =>
          error instanceof WorkspaceBusyError &&
          new RegExp(`pid ${child.pid}\\b.*chronicle stop`).test(error.message),
      );
    } finally {
      child.kill("SIGKILL");
      await child.status;
      await reader.cancel();
      await child.stderr.cancel();
    }
    strictEqual(processLockHeld(dir), false, "released by the process's end");
    const lock = ProcessLock.acquire(dir);
    strictEqual(processLockHeld(dir), true, "held by this process now");
    lock.release();
    strictEqual(processLockHeld(dir), false);
  });
});

Deno.test("a second Chronicle on a running workspace is refused, and runs once the first is stopped", async () => {
  await withTempDir(async (dir) => {
    const root = join(dir, "ws");
    await Deno.mkdir(root);
    await Deno.writeTextFile(join(root, "a.txt"), "hello");
    const data = join(root, ".chronicle");
    const first = spawnChronicle([root]);
    try {
      await waitFor("ready", async () => (await controlJson(data, "/ready")).status === 200);
      const second = await runChronicle([root]);
      strictEqual(second.code, 1, second.stderr);
      match(second.stderr, /Another Chronicle \(pid \d+\) runs on the data folder/);
      ok(processLockHeld(data));
      const stop = await runChronicle(["stop", "-C", root]);
      strictEqual(stop.code, 0, stop.stderr);
      strictEqual(processLockHeld(data), false, "stop returns once the process is gone");
    } finally {
      await first.stop();
    }
  });
});
