import assert from "node:assert/strict";
import { canSyncFileSystem, syncFileSystem, writeFileAtomic } from "../../lib/disk/mod.ts";
import { fakeProgram } from "../_helpers/fake_program.ts";
import { runChronicle } from "../_helpers/processes.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

const SCRIPT = new URL("./_sync_twice.ts", import.meta.url).pathname;

Deno.test("writeFileAtomic() answers the written file's status, as lstat then sees it", () =>
  withTempDir(async (dir) => {
    for (const visibleFirst of [false, true]) {
      for (const syncFile of [true, false]) {
        const dest = `${dir}/f-${visibleFirst}-${syncFile}`;
        const bytes = new TextEncoder().encode(`written ${visibleFirst} ${syncFile}`);
        const info = await writeFileAtomic(`${dir}/tmp`, dest, bytes, 0o751, {
          visibleFirst,
          syncFile,
        });
        const seen = await Deno.lstat(dest);
        assert.deepEqual(
          [info.ino, info.size, info.mode, info.mtime?.getTime()],
          [seen.ino, seen.size, seen.mode, seen.mtime?.getTime()],
        );
        assert.equal(seen.mode! & 0o7777, 0o751);
        assert.equal(await Deno.readTextFile(dest), `written ${visibleFirst} ${syncFile}`);
      }
    }
  }));

/** Whether this machine's `sync` takes `-f` (busybox builds and macOS may not). */
const SYNC_F_RUNS = await new Deno.Command("sync", { args: ["-f", "/"], stderr: "null" })
  .output().then((output) => output.success, () => false);

Deno.test({
  name: "syncFileSystem() flushes where `sync -f` runs",
  ignore: !SYNC_F_RUNS,
  fn: () =>
    withTempDir(async (dir) => {
      await Deno.writeTextFile(`${dir}/dirty.txt`, "to flush");
      assert.equal(canSyncFileSystem(), true);
      assert.equal(await syncFileSystem(dir), true);
    }),
});

/** Runs `_sync_twice.ts` on `dir` with these permissions (and a fake `sync` when given). */
async function syncTwice(
  dir: string,
  options: { fakeSync?: string; permissions: string[] },
): Promise<unknown[]> {
  const env = options.fakeSync === undefined
    ? {}
    : await fakeProgram(dir, "sync", options.fakeSync);
  const { code, stdout, stderr } = await runChronicle([dir], {
    script: SCRIPT,
    permissions: options.permissions,
    env,
  });
  assert.equal(code, 0, stderr);
  return stdout.trim().split("\n").map((line) => JSON.parse(line));
}

const MAY_RUN_SYNC = ["--allow-read", "--allow-write", "--allow-run=sync"];

Deno.test("syncFileSystem(): a `sync` that never worked is not used; one that stops working throws", async (t) => {
  await t.step("a sync without -f: not available, for good", () =>
    withTempDir(async (dir) => {
      const calls = await syncTwice(dir, {
        fakeSync: `echo "sync: invalid option -- 'f'" >&2; exit 1`,
        permissions: MAY_RUN_SYNC,
      });
      assert.deepEqual(calls, [{ flushed: false }, { flushed: false }]);
    }));
  await t.step(
    "a sync that fails after working: the I/O error is reported",
    () =>
      withTempDir(async (dir) => {
        // Succeeds the first time (leaving a mark), fails after.
        const calls = await syncTwice(dir, {
          fakeSync:
            `if [ -e "${dir}/worked" ]; then echo "sync: error syncing: Input/output error" >&2; exit 1; fi\n: > "${dir}/worked"`,
          permissions: MAY_RUN_SYNC,
        });
        assert.deepEqual(calls[0], { flushed: true });
        const second = calls[1] as { error?: string };
        assert.match(second.error ?? "", /Input\/output error/);
      }),
  );
  await t.step("no permission to run sync: not available", () =>
    withTempDir(async (dir) => {
      const calls = await syncTwice(dir, { permissions: ["--allow-read", "--allow-write"] });
      assert.deepEqual(calls, [{ flushed: false }, { flushed: false }]);
    }));
});
