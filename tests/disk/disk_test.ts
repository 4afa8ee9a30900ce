import assert from "node:assert/strict";
import {
  canSyncFileSystem,
  lstatOrNull,
  prepareFileAtomic,
  syncFileSystem,
  writeFileAtomic,
} from "../../lib/disk/mod.ts";
import { fakeProgram } from "../_helpers/fake_program.ts";
import { runChronicle } from "../_helpers/processes.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

const SCRIPT = new URL("./_sync_twice.ts", import.meta.url).pathname;

Deno.test("writeFileAtomic() gives the file exactly its mode, whatever the umask takes away", () =>
  withTempDir(async (dir) => {
    // 0o666 loses bits to a usual umask (022); a sticky bit is never given by open().
    for (const mode of [0o666, 0o1755, 0o600, 0o751]) {
      const dest = `${dir}/f-${mode.toString(8)}`;
      const info = await writeFileAtomic(`${dir}/tmp`, dest, new Uint8Array(3), mode);
      const seen = await Deno.lstat(dest);
      assert.equal(seen.mode! & 0o7777, mode, mode.toString(8));
      assert.equal(info.mode, seen.mode, "the status answered is the final one");
    }
  }));

Deno.test("prepareFileAtomic() leaves the file under its temp name until placed", () =>
  withTempDir(async (dir) => {
    const bytes = new TextEncoder().encode("prepared");
    const prepared = await prepareFileAtomic(`${dir}/t1`, `${dir}/kept`, bytes, 0o640);
    assert.equal(await lstatOrNull(`${dir}/kept`), null, "nothing at the destination yet");
    assert.equal((await Deno.lstat(`${dir}/t1`)).ino, prepared.written.ino);
    const placed = await prepared.place();
    const seen = await Deno.lstat(`${dir}/kept`);
    assert.deepEqual(
      [placed.ino, placed.size, placed.mtime?.getTime()],
      [seen.ino, seen.size, seen.mtime?.getTime()],
    );
    assert.equal(await lstatOrNull(`${dir}/t1`), null);
  }));

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

Deno.test("writeFileAtomic() with createOnly creates a missing file and leaves anything there untouched", () =>
  withTempDir(async (dir) => {
    const bytes = new TextEncoder().encode("new content");
    const made = await writeFileAtomic(`${dir}/t1`, `${dir}/new.txt`, bytes, 0o640, {
      createOnly: true,
    });
    assert.equal(await Deno.readTextFile(`${dir}/new.txt`), "new content");
    const seen = await Deno.lstat(`${dir}/new.txt`);
    assert.deepEqual([made.ino, made.size, made.mode], [seen.ino, seen.size, seen.mode]);
    assert.equal(seen.mode! & 0o7777, 0o640);
    assert.equal(seen.nlink, 1, "the temp name is gone");

    await Deno.writeTextFile(`${dir}/file`, "someone's file");
    await Deno.mkdir(`${dir}/folder`);
    await Deno.symlink("nowhere", `${dir}/dangling`);
    for (const name of ["file", "folder", "dangling"]) {
      await assert.rejects(
        writeFileAtomic(`${dir}/t-${name}`, `${dir}/${name}`, bytes, 0o644, { createOnly: true }),
        Deno.errors.AlreadyExists,
        name,
      );
    }
    assert.equal(await Deno.readTextFile(`${dir}/file`), "someone's file");
    assert.ok((await Deno.lstat(`${dir}/folder`)).isDirectory);
    assert.equal(await Deno.readLink(`${dir}/dangling`), "nowhere");
    const names = [];
    for await (const entry of Deno.readDir(dir)) names.push(entry.name);
    assert.deepEqual(names.sort(), ["dangling", "file", "folder", "new.txt"], "no temp file left");
  }));

/** Bytes that differ at every position of a page, so a piece written twice or skipped shows. */
function patterned(size: number, seed: number): Uint8Array {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + seed + (i >> 12)) & 0xff;
  return bytes;
}

async function* inPieces(bytes: Uint8Array, sizes: number[]): AsyncGenerator<Uint8Array> {
  let at = 0;
  for (const size of sizes) {
    yield bytes.subarray(at, at + size);
    at += size;
  }
  if (at < bytes.length) yield bytes.subarray(at);
}

Deno.test("writeFileAtomic() writes small and large pieces (these off the main thread) in order", async (t) => {
  const KiB = 1024;
  const cases = [
    { description: "a small buffer", input: { size: 3 * KiB, pieces: null } },
    { description: "just under 64 KiB", input: { size: 64 * KiB - 1, pieces: null } },
    { description: "exactly 64 KiB", input: { size: 64 * KiB, pieces: null } },
    { description: "a large buffer", input: { size: 3 * 1024 * KiB + 17, pieces: null } },
    {
      description: "small and large pieces mixed",
      input: { size: 900 * KiB, pieces: [10, 64 * KiB, 64 * KiB - 1, 300 * KiB, 1, 200 * KiB] },
    },
  ];
  await withTempDir(async (dir) => {
    for (const [index, { description, input }] of cases.entries()) {
      await t.step(description, async () => {
        const bytes = patterned(input.size, index);
        const dest = `${dir}/f${index}`;
        const source = input.pieces ? inPieces(bytes, input.pieces) : bytes;
        const info = await writeFileAtomic(`${dir}/t${index}`, dest, source, 0o640, {
          createOnly: index % 2 === 0,
          visibleFirst: index % 2 === 1,
        });
        assert.deepEqual(await Deno.readFile(dest), bytes);
        assert.equal(info.size, input.size);
        assert.equal((await Deno.lstat(dest)).mode! & 0o7777, 0o640);
      });
    }
  });
});

Deno.test("writeFileAtomic() leaves nothing behind when a source fails after a large piece", () =>
  withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/dest`, "before");
    async function* failing(): AsyncGenerator<Uint8Array> {
      yield patterned(512 * 1024, 1);
      throw new Error("the source broke");
    }
    await assert.rejects(
      writeFileAtomic(`${dir}/tmp`, `${dir}/dest`, failing(), 0o644),
      /the source broke/,
    );
    assert.equal(await Deno.readTextFile(`${dir}/dest`), "before", "dest untouched");
    const names = [];
    for await (const entry of Deno.readDir(dir)) names.push(entry.name);
    assert.deepEqual(names, ["dest"], "no temp file left");
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
