import assert from "node:assert/strict";
import { sha256Hex } from "../../lib/cas/mod.ts";
import { lstatOrNull } from "../../lib/disk/mod.ts";
import { PathError } from "../../lib/paths/mod.ts";
import { Workspace } from "../../lib/workspace/mod.ts";
import { fakeProgram } from "../_helpers/fake_program.ts";
import { runChronicle } from "../_helpers/processes.ts";
import { put, withTempDir } from "../_helpers/temp_dir.ts";

const text = (s: string) => new TextEncoder().encode(s);

Deno.test("Workspace.applyChanges() writes and removes many paths, recorded in one transaction", () =>
  withTempDir(async (root) => {
    await put(root, "old.txt", "going");
    await put(root, "dir/a.txt", "going too");
    await put(root, "dir/b.txt", "going too");
    const workspace = await Workspace.open({ root });
    try {
      await workspace.scan();
      const before = workspace.store.sequence();
      const hashes: string[] = [];
      for (let i = 0; i < 40; i++) {
        hashes.push((await workspace.cas.putBytes(text(`file ${i}`))).hash);
      }
      const { recorded, failed } = await workspace.applyChanges([
        ...hashes.map((hash, i) => ({ path: `new/${i % 4}/f${i}.txt`, hash, mode: 0o100644 })),
        { path: "tool.sh", hash: hashes[0]!, mode: 0o755 },
        { path: "old.txt", remove: true },
        { path: "dir", remove: true },
        { path: "never-there.txt", remove: true },
      ], { origin: "master" });
      assert.deepEqual(failed, []);
      // The folders made (new, new/0 … new/3) and removed (dir) are recorded too.
      assert.equal(recorded.length, 40 + 1 + 3 + 5 + 1);
      assert.deepEqual(
        recorded.map((iteration) => iteration.sequence),
        recorded.map((_, i) => before + 1 + i),
        "consecutive sequences, recorded together",
      );
      assert.ok(recorded.every((iteration) => iteration.origin === "master"));
      for (let i = 0; i < 40; i++) {
        assert.equal(await Deno.readTextFile(`${root}/new/${i % 4}/f${i}.txt`), `file ${i}`);
      }
      assert.equal((await Deno.stat(`${root}/tool.sh`)).mode! & 0o777, 0o755);
      for (const gone of ["old.txt", "dir"]) {
        await assert.rejects(Deno.lstat(`${root}/${gone}`), Deno.errors.NotFound);
      }
      assert.deepEqual(
        workspace.store.list().map((iteration) => iteration.path).filter((p) =>
          !p.startsWith("new/")
        ),
        ["new", "tool.sh"],
      );
      // What is remembered of each written file is what the disk shows, so the next look
      // compares against the truth (the mtime is untrusted while fresh: racy).
      const states = workspace.store.fileStates("new");
      assert.equal(states.size, 40);
      for (const [path, state] of states) {
        const info = await Deno.lstat(`${root}/${path}`);
        assert.deepEqual(
          [state.size, state.ino, state.mode & 0o777],
          [info.size, info.ino, info.mode! & 0o777],
          path,
        );
        assert.equal(state.mtimeMs, -1, `${path}: written just now, so looked at again next time`);
      }
      assert.deepEqual((await workspace.scan()).recorded, [], "the disk matches what was recorded");
    } finally {
      await workspace.close();
    }
  }));

Deno.test("Workspace.applyChanges() writes and records a batch of copies where the file system cannot be flushed at once", async (t) => {
  const script = new URL("./_apply_batch.ts", import.meta.url).pathname;
  const cases = [
    { name: "no permission to run sync", mayRunSync: false },
    // Tried for the batch, fails: the files written unflushed are flushed one by one.
    { name: "a sync without -f", mayRunSync: true },
  ];
  for (const { name, mayRunSync } of cases) {
    await t.step(name, () =>
      withTempDir(async (dir) => {
        const root = `${dir}/ws`;
        await Deno.mkdir(root);
        const env = mayRunSync
          ? await fakeProgram(
            dir,
            "sync",
            `: > "${dir}/asked"; echo "sync: invalid option -- 'f'" >&2; exit 1`,
          )
          : {};
        const { code, stdout, stderr } = await runChronicle([root, "50"], {
          script,
          permissions: [
            "--allow-read",
            "--allow-write",
            "--allow-env",
            ...(mayRunSync ? ["--allow-run=sync"] : []),
          ],
          env,
        });
        assert.equal(code, 0, stderr);
        assert.deepEqual(JSON.parse(stdout), { fileSystemSync: false, recorded: 56, failed: 0 });
        for (let i = 0; i < 50; i++) {
          assert.equal(await Deno.readTextFile(`${root}/batch/${i % 5}/f${i}.txt`), `file ${i}`);
        }
        const asked = (await lstatOrNull(`${dir}/asked`)) !== null;
        assert.equal(asked, mayRunSync, "sync was tried only where it may run");
      }));
  }
});

Deno.test("Workspace.applyChanges() flushes a large batch in chunks; one failed flush fails them all", async (t) => {
  const script = new URL("./_apply_batch.ts", import.meta.url).pathname;
  const count = 1100;
  // Counts its calls in `calls`; fails the call numbered FAIL_AT, if any. Chunks' flushes
  // may run at once: each call counts under a lock, or two could read the same count.
  const fakeSync = (dir: string) =>
    `exec 9>"${dir}/calls.lock"; flock 9; ` +
    `n=$(( $(cat "${dir}/calls" 2>/dev/null || echo 0) + 1 )); echo $n > "${dir}/calls"; ` +
    `if [ "$n" = "\${FAIL_AT:-0}" ]; then echo "sync: error syncing: Input/output error" >&2; exit 1; fi`;
  const cases = [
    { name: "every flush works: all recorded", failAt: "0", recorded: count, kind: "copies" },
    { name: "the second flush fails: none recorded", failAt: "2", recorded: 0, kind: "copies" },
    // Originals are fsynced before their rename, never flushed later by sync -f.
    { name: "originals: no sync -f", failAt: "1", recorded: count, kind: "originals" },
  ];
  for (const { name, failAt, recorded, kind } of cases) {
    await t.step(name, () =>
      withTempDir(async (dir) => {
        const root = `${dir}/ws`;
        await Deno.mkdir(root);
        const env = { ...await fakeProgram(dir, "sync", fakeSync(dir)), FAIL_AT: failAt };
        const { code, stdout, stderr } = await runChronicle([root, String(count), kind], {
          script,
          permissions: ["--allow-read", "--allow-write", "--allow-env", "--allow-run=sync"],
          env,
        });
        assert.equal(code, 0, stderr);
        const result = JSON.parse(stdout);
        // With its files, the folders they were put in (batch, batch/0 … batch/4).
        const folders = recorded === 0 ? 0 : 6;
        assert.deepEqual([result.recorded, result.failed], [recorded + folders, count - recorded]);
        // The script's own flush at the end is one more call.
        const flushes = Number(await Deno.readTextFile(`${dir}/calls`)) - 1;
        if (kind === "copies") {
          assert.ok(flushes >= 2, `${flushes} flushes for ${count} changes: flushed in chunks`);
        } else assert.equal(flushes, 0);
        for (const i of [0, count - 1]) {
          assert.equal(await Deno.readTextFile(`${root}/batch/${i % 5}/f${i}.txt`), `file ${i}`);
        }
      }));
  }
});

Deno.test("Workspace.applyChanges() makes the good changes and reports each bad one", () =>
  withTempDir(async (root) => {
    await put(root, "folder-in-the-way/kept.txt", "not lost");
    await Deno.mkdir(`${root}/empty-folder`);
    await Deno.symlink("/tmp", `${root}/linked`);
    const workspace = await Workspace.open({ root });
    try {
      await workspace.scan();
      const { hash } = await workspace.cas.putBytes(text("content"));
      const { recorded, failed } = await workspace.applyChanges([
        { path: "good.txt", hash, mode: 0o644 },
        { path: "empty-folder", hash, mode: 0o644 }, // holds nothing: replaced by the file
        { path: "../escape.txt", hash, mode: 0o644 },
        { path: "folder-in-the-way", hash, mode: 0o644 },
        { path: "linked/inside.txt", hash, mode: 0o644 },
        { path: "missing-content.txt", hash: "0".repeat(64), mode: 0o644 },
      ]);
      assert.deepEqual(recorded.map((iteration) => iteration.path), ["empty-folder", "good.txt"]);
      assert.deepEqual(
        failed.map((failure) => failure.path).sort(),
        ["../escape.txt", "folder-in-the-way", "linked/inside.txt", "missing-content.txt"],
      );
      for (const failure of failed.filter((f) => f.path !== "missing-content.txt")) {
        assert.ok(failure.error instanceof PathError, `${failure.path}: ${failure.error}`);
      }
      assert.equal(await Deno.readTextFile(`${root}/good.txt`), "content");
      assert.equal(await Deno.readTextFile(`${root}/empty-folder`), "content");
      assert.equal(await Deno.readTextFile(`${root}/folder-in-the-way/kept.txt`), "not lost");
      await assert.rejects(Deno.lstat("/tmp/inside.txt"), Deno.errors.NotFound);
      await assert.rejects(Deno.lstat(`${root}/missing-content.txt`), Deno.errors.NotFound);
    } finally {
      await workspace.close();
    }
  }));

Deno.test("Workspace.applyChanges() create-only writes refuse whatever is on disk but an empty folder", () =>
  withTempDir(async (root) => {
    await put(root, "unrecorded.txt", "someone's file");
    await put(root, "full-folder/kept.txt", "not lost");
    await Deno.mkdir(`${root}/empty-folder`);
    await Deno.symlink("unrecorded.txt", `${root}/link`);
    const workspace = await Workspace.open({ root });
    try {
      const { hash } = await workspace.cas.putBytes(text("content"));
      const paths = ["unrecorded.txt", "full-folder", "link", "empty-folder", "new/made.txt"];
      const { recorded, failed } = await workspace.applyChanges(
        paths.map((path) => ({ path, hash, mode: 0o644, createOnly: true })),
      );
      assert.deepEqual(recorded.map((iteration) => iteration.path), [
        "empty-folder",
        "new",
        "new/made.txt",
      ]);
      const refused = Object.fromEntries(failed.map((f) => [f.path, f.error]));
      assert.deepEqual(Object.keys(refused).sort(), ["full-folder", "link", "unrecorded.txt"]);
      assert.ok(refused["unrecorded.txt"] instanceof Deno.errors.AlreadyExists);
      assert.ok(refused["link"] instanceof Deno.errors.AlreadyExists);
      assert.ok(refused["full-folder"] instanceof PathError, "a folder with files stays");
      assert.equal(await Deno.readTextFile(`${root}/unrecorded.txt`), "someone's file");
      assert.equal(await Deno.readLink(`${root}/link`), "unrecorded.txt");
      assert.equal(await Deno.readTextFile(`${root}/full-folder/kept.txt`), "not lost");
      assert.equal(await Deno.readTextFile(`${root}/empty-folder`), "content");
      assert.equal(await Deno.readTextFile(`${root}/new/made.txt`), "content");
      // Links too: made where nothing is, refused where a file is.
      const target = await workspace.cas.putBytes(text("new/made.txt"));
      const links = await workspace.applyChanges(
        ["unrecorded.txt", "new-link"].map((path) => ({
          path,
          hash: target.hash,
          mode: 0o120777,
          createOnly: true,
        })),
      );
      assert.deepEqual(links.recorded.map((iteration) => iteration.path), ["new-link"]);
      assert.ok(links.failed[0]?.error instanceof Deno.errors.AlreadyExists);
      assert.equal(await Deno.readTextFile(`${root}/unrecorded.txt`), "someone's file");
      assert.equal(await Deno.readLink(`${root}/new-link`), "new/made.txt");
    } finally {
      await workspace.close();
    }
  }));

Deno.test("Workspace.applyChanges() makes a folder where a file or link is, unless create-only", async (t) => {
  const cases = [
    { description: "over a file", input: { kind: "file", createOnly: false }, expected: "made" },
    { description: "over a link", input: { kind: "link", createOnly: false }, expected: "made" },
    { description: "over a folder", input: { kind: "dir", createOnly: false }, expected: "made" },
    { description: "nothing there", input: { kind: "none", createOnly: true }, expected: "made" },
    {
      description: "create-only, a file",
      input: { kind: "file", createOnly: true },
      expected: "refused",
    },
    {
      description: "create-only, a link",
      input: { kind: "link", createOnly: true },
      expected: "refused",
    },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () =>
      withTempDir(async (root) => {
        await put(root, "other.txt", "kept");
        if (input.kind === "file") await put(root, "p", "in the way");
        if (input.kind === "link") await Deno.symlink("other.txt", `${root}/p`);
        if (input.kind === "dir") await Deno.mkdir(`${root}/p`);
        const workspace = await Workspace.open({ root });
        try {
          const { recorded, failed } = await workspace.applyChanges([
            { path: "p", hash: "", mode: 0o40700, createOnly: input.createOnly },
          ]);
          const info = await Deno.lstat(`${root}/p`);
          if (expected === "made") {
            assert.deepEqual(failed, []);
            assert.ok(info.isDirectory);
            assert.equal((info.mode ?? 0) & 0o7777, 0o700);
            assert.deepEqual(recorded.map((iteration) => iteration.path), ["p"]);
          } else {
            assert.ok(failed[0]?.error instanceof Deno.errors.AlreadyExists);
            assert.equal(info.isDirectory, false);
          }
          assert.equal(await Deno.readTextFile(`${root}/other.txt`), "kept");
        } finally {
          await workspace.close();
        }
      }));
  }
});

Deno.test("Workspace.applyChanges() writing a file where a recorded folder was removed unseen records its files deleted", () =>
  withTempDir(async (root) => {
    await put(root, "p/q.txt", "inside");
    await put(root, "p/r/s.txt", "deeper");
    const workspace = await Workspace.open({ root });
    try {
      await workspace.scan();
      await Deno.remove(`${root}/p`, { recursive: true }); // nobody watches: not recorded
      const { hash } = await workspace.cas.putBytes(text("now a file"));
      const { recorded, failed } = await workspace.applyChanges([{ path: "p", hash, mode: 0o644 }]);
      assert.deepEqual(failed, []);
      assert.deepEqual(
        recorded.map((iteration) => [iteration.path, iteration.deleted]),
        [["p/r/s.txt", true], ["p/r", true], ["p/q.txt", true], ["p", false]],
        "deletions first, children before their folder, in the same transaction",
      );
      assert.deepEqual(workspace.store.list().map((iteration) => iteration.path), ["p"]);
    } finally {
      await workspace.close();
    }
  }));

/** Mounts a tmpfs on `dir`; `false` when this process may not (not root, a container). */
async function mountTmpfs(dir: string): Promise<boolean> {
  if (Deno.build.os !== "linux" || Deno.uid() !== 0) return false;
  const mount = await new Deno.Command("mount", {
    args: ["-t", "tmpfs", "chronicle-test", dir],
    stderr: "null",
  }).output().catch(() => null);
  return mount?.success ?? false;
}

async function unmount(dir: string): Promise<void> {
  await new Deno.Command("umount", { args: [dir] }).output();
}

/** Whether the nested-mount test can run here: tried once, on a folder of its own. */
const CAN_MOUNT = await (async () => {
  const probe = await Deno.makeTempDir({ prefix: "chronicle-mount-probe-" });
  try {
    const mounted = await mountTmpfs(probe);
    if (mounted) await unmount(probe);
    return mounted;
  } finally {
    await Deno.remove(probe, { recursive: true }).catch(() => {});
  }
})();

Deno.test({
  name: "Workspace.applyChanges() flushes a large batch on a mount inside the workspace too",
  ignore: !CAN_MOUNT,
  fn: () =>
    withTempDir(async (root) => {
      await Deno.mkdir(`${root}/mounted`);
      assert.ok(await mountTmpfs(`${root}/mounted`), "mounting worked for the probe");
      try {
        const workspace = await Workspace.open({ root });
        try {
          const changes = [];
          for (let i = 0; i < 40; i++) {
            const { hash } = await workspace.cas.putBytes(text(`file ${i}`));
            const folder = i % 2 === 0 ? "mounted" : "local";
            changes.push({ path: `${folder}/f${i}.txt`, hash, mode: 0o640 });
          }
          const { recorded, failed } = await workspace.applyChanges(changes, {
            visibleFirst: true,
          });
          assert.deepEqual(failed, []);
          assert.equal(recorded.length, 40 + 2, "and the folders, local made for its files");
          for (const change of changes) {
            const info = await Deno.lstat(`${root}/${change.path}`);
            assert.equal(info.mode! & 0o777, 0o640, change.path);
            const state = workspace.store.fileStates(change.path).get(change.path)!;
            assert.equal(state.ino, info.ino, `${change.path}: the state of the file written`);
          }
          assert.deepEqual((await workspace.scan()).recorded, []);
        } finally {
          await workspace.close();
        }
      } finally {
        await unmount(`${root}/mounted`);
      }
    }),
});

Deno.test("Workspace.applyChanges() refuses related paths in one batch, before touching the disk", () =>
  withTempDir(async (root) => {
    const workspace = await Workspace.open({ root });
    try {
      const { hash } = await workspace.cas.putBytes(text("x"));
      for (
        const pair of [["a", "a/b.txt"], ["a/b.txt", "a"], ["same.txt", "same.txt"]] as const
      ) {
        await assert.rejects(
          workspace.applyChanges([
            { path: pair[0], hash, mode: 0o644 },
            { path: pair[1], remove: true },
          ]),
          TypeError,
        );
      }
      assert.deepEqual([...Deno.readDirSync(root)].map((e) => e.name), [".chronicle"]);
      assert.equal(workspace.store.sequence(), 0);
    } finally {
      await workspace.close();
    }
  }));

Deno.test("Workspace.applyChanges() records a folder it made as its last look found it: a mode changed after that look is not taken for its own", () =>
  withTempDir(async (root) => {
    let armed = true;
    const workspace = await Workspace.open({
      root,
      hooks: {
        // Someone changes the folder's mode after the writer's last look, before the record.
        beforeRecord: (paths) => {
          if (armed && paths.includes("made")) Deno.chmodSync(`${root}/made`, 0o700);
          armed = false;
        },
      },
    });
    try {
      const { recorded, failed } = await workspace.applyChanges(
        [{ path: "made", hash: "", mode: 0o040755 }],
        { origin: "master", onlyOwnChanges: true },
      );
      assert.deepEqual(failed, []);
      assert.equal(armed, false, "the hook ran");
      assert.deepEqual(
        recorded.map(({ path, mode, origin }) => ({ path, mode: mode & 0o7777, origin })),
        [{ path: "made", mode: 0o755, origin: "master" }],
        "the change made, as its last look saw it",
      );
      // The later change is the next look's to record, as the workspace's own.
      await workspace.capture(["made"]);
      const latest = workspace.store.latest("made")!;
      assert.deepEqual({ mode: latest.mode & 0o7777, origin: latest.origin }, {
        mode: 0o700,
        origin: "local",
      });
    } finally {
      await workspace.close();
    }
  }));

Deno.test("Workspace.applyChanges() calls of one batch share their folder checks, but never one found changed since", () =>
  withTempDir(async (base) => {
    const root = `${base}/w`;
    const outside = `${base}/outside`;
    await Deno.mkdir(root);
    await Deno.mkdir(outside);
    let swap = true;
    const workspace = await Workspace.open({
      root,
      hooks: {
        // "b" is swapped for a link out of the workspace right after it is made.
        afterChange: (path) => {
          if (path !== "b" || !swap) return;
          swap = false;
          Deno.removeSync(`${root}/b`);
          Deno.symlinkSync(outside, `${root}/b`);
        },
      },
    });
    try {
      const checkedFolders = new Map<string, number>();
      const options = { origin: "master", onlyOwnChanges: true, checkedFolders };
      const folders = await workspace.applyChanges([
        { path: "a", hash: "", mode: 0o040755 },
        { path: "b", hash: "", mode: 0o040755 },
      ], options);
      assert.deepEqual(folders.failed.map(({ path }) => path), ["b"], "b changed since made");
      assert.deepEqual([...checkedFolders.keys()], ["a"], "only the folder still made is kept");
      assert.equal(checkedFolders.get("a"), Deno.statSync(root).dev, "with its device");
      const hash = (await workspace.cas.putBytes(text("inside"))).hash;
      const files = await workspace.applyChanges([
        { path: "a/f.txt", hash, mode: 0o100644 },
        { path: "b/f.txt", hash, mode: 0o100644 },
      ], options);
      assert.deepEqual(files.failed.map(({ path }) => path), ["b/f.txt"]);
      assert.ok(files.failed[0]!.error instanceof PathError, "refused: a link on the way");
      assert.equal(await lstatOrNull(`${outside}/f.txt`), null, "nothing written through it");
      assert.equal(await Deno.readTextFile(`${root}/a/f.txt`), "inside");
    } finally {
      await workspace.close();
    }
  }));

Deno.test("Workspace.applyChanges() trusts a large batch of copies at once, yet records a same-size write right after", () =>
  withTempDir(async (root) => {
    const workspace = await Workspace.open({ root });
    try {
      // More than two chunks of 512: chunks placed behind the next one's writes, and a last
      // one placed once it settled.
      const count = 1_100;
      const changes = [];
      for (let i = 0; i < count; i++) {
        const bytes = text(`copy ${String(i).padStart(5, "0")}`);
        changes.push({
          path: `copies/${i % 7}/f${i}.txt`,
          hash: sha256Hex(bytes),
          mode: 0o644,
          bytes,
        });
      }
      const { failed } = await workspace.applyChanges(changes, {
        origin: "master",
        visibleFirst: true,
      });
      assert.deepEqual(failed, []);
      const states = workspace.store.fileStates("copies");
      assert.equal(states.size, count);
      for (const [path, state] of states) {
        // Racy only where the file system may keep whole seconds (see settledWhenPlaced).
        const onDisk = (await Deno.lstat(`${root}/${path}`)).mtime!.getTime();
        const trusted = onDisk % 1000 !== 0;
        assert.equal(state.mtimeMs, trusted ? onDisk : -1, `${path}: its state as written`);
      }
      // Right after, in place and of the same size: its modification time moved all the same.
      await Deno.writeTextFile(`${root}/copies/3/f3.txt`, "COPY 00003");
      const { recorded } = await workspace.scan();
      assert.deepEqual(recorded.map((iteration) => iteration.path), ["copies/3/f3.txt"]);
      assert.equal(recorded[0]!.hash, sha256Hex(text("COPY 00003")));
    } finally {
      await workspace.close();
    }
  }));
