/**
 * A sandbox's writes reach the master in the order they were made, whatever their names:
 * the sandbox records what it finds in the order the files were modified, and the master
 * records each run of write-backs in the sandbox's order, not by path.
 */
import { putAtomic } from "../_helpers/temp_dir.ts";
import { assertEquals } from "./_assert.ts";
import { startMaster, startReplica, stopPeers, waitForSameTrees, withDirs } from "./_harness.ts";
import type { Iteration } from "../../lib/store/mod.ts";

/** Waits for the file system's clock to move past `mtimeMs`, on a scratch file. */
async function nextTick(scratch: string, mtimeMs: number): Promise<void> {
  for (;;) {
    await Deno.writeFile(scratch, new Uint8Array());
    if ((await Deno.stat(scratch)).mtime!.getTime() > mtimeMs) return;
  }
}

Deno.test("sandbox writes named out of path order reach the master in the order made", async () => {
  await withDirs(["m", "r", "clock"], async ({ base, m, r, clock }) => {
    const sock = `${base}/m.sock`;
    const master = await startMaster(m, sock);
    const sandbox = await startReplica(r, sock, { args: ["--sandbox-id", "ordered"] });
    try {
      await sandbox.command("sync-wait 20000");
      await Deno.mkdir(`${r}/out`);
      // Neither path order nor the order a folder lists them in (7919 is prime), and each
      // modified later than the one before.
      const count = 300;
      const names = Array.from(
        { length: count },
        (_, k) => `out/f${String((k * 7919) % count).padStart(3, "0")}-${k}`,
      );
      let mtimeMs = 0;
      for (const name of names) {
        await nextTick(`${clock}/tick`, mtimeMs);
        await putAtomic(r, name, `content of ${name}`);
        mtimeMs = (await Deno.stat(`${r}/${name}`)).mtime!.getTime();
      }
      const tree = await waitForSameTrees([m, r], { peers: [master, sandbox], timeoutMs: 60_000 });
      assertEquals(tree.size, count);
      const changes = await master.command<Iteration[]>("changes 0");
      const order = changes.filter((it) => it.origin === "ordered").map((it) => it.path);
      assertEquals(order, ["out", ...names]); // the folder first (PROTOCOL.md §8)
    } finally {
      await stopPeers(sandbox, master);
    }
  });
});
