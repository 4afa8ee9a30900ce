import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { CHUNKING_THRESHOLD, sha256Hex } from "../../lib/cas/mod.ts";
import { lstatOrNullSync, writeSymlinkAtomic } from "../../lib/disk/mod.ts";
import { PathError } from "../../lib/paths/mod.ts";
import { S_IFLNK } from "../../lib/store/mod.ts";
import { ForbiddenWriteError, Workspace, WorkspaceGoneError } from "../../lib/workspace/mod.ts";
import { SCAN_SLICE } from "../../lib/workspace/workspace.ts";
import { put, withTempDir } from "../_helpers/temp_dir.ts";
import { sha256OfText } from "../_helpers/text_hash.ts";
import { waitFor } from "../_helpers/wait_for.ts";

const text = (s: string) => new TextEncoder().encode(s);

async function open(root: string, ignore: string[] = []): Promise<Workspace> {
  return await Workspace.open({ root, ignore });
}

Deno.test("Workspace.scan({ keepRecorded: false }) records the same and only counts it", () =>
  withTempDir(async (root) => {
    await put(root, "a.txt", "one");
    await put(root, "src/b.ts", "two");
    const workspace = await open(root);
    try {
      const first = await workspace.scan({ keepRecorded: false });
      assert.deepEqual(first.recorded, []);
      assert.equal(first.recordedCount, 3);
      assert.deepEqual(workspace.store.list().map((i) => i.path), ["a.txt", "src", "src/b.ts"]);
      await put(root, "a.txt", "one, edited");
      const second = await workspace.scan();
      assert.deepEqual(second.recorded.map((i) => i.path), ["a.txt"]);
      assert.equal(second.recordedCount, 1);
    } finally {
      await workspace.close();
    }
  }));

Deno.test("Workspace.scan() records the tree, then only what changed since, deletions included", () =>
  withTempDir(async (root) => {
    await put(root, "a.txt", "one");
    await put(root, "src/b.ts", "two");
    await put(root, ".git/HEAD", "ref");
    let workspace = await open(root);
    try {
      const first = await workspace.scan();
      // The folder first, then the files in the order they were written (PROTOCOL.md §8).
      assert.deepEqual(first.recorded.map((i) => i.path), ["src", "a.txt", "src/b.ts"]);
      assert.deepEqual((await workspace.scan()).recorded, [], "nothing changed");
    } finally {
      await workspace.close();
    }
    await put(root, "a.txt", "one, edited while Chronicle was stopped");
    await Deno.remove(`${root}/src/b.ts`);
    await put(root, "c.txt", "three");
    workspace = await open(root);
    try {
      const again = await workspace.scan();
      assert.deepEqual(
        again.recorded.map((i) => `${i.path}#${i.iteration}${i.deleted ? " deleted" : ""}`),
        ["src/b.ts#2 deleted", "a.txt#2", "c.txt#1"], // deletions first
      );
      assert.equal(workspace.store.list().some((i) => i.path.startsWith(".chronicle")), false);
    } finally {
      await workspace.close();
    }
  }));

Deno.test("Workspace history: edits, every iteration readable, deletion and re-creation", () =>
  withTempDir(async (root) => {
    const workspace = await open(root);
    try {
      for (let n = 1; n <= 5; n++) await workspace.writeBytes("notes.md", text(`version ${n}`));
      await workspace.remove("notes.md");
      await workspace.writeBytes("notes.md", text("reborn"));
      const history = workspace.store.history("notes.md");
      assert.deepEqual(history.map((i) => i.iteration), [1, 2, 3, 4, 5, 6, 7]);
      assert.equal(history[5]!.deleted, true);
      for (let n = 1; n <= 5; n++) {
        const bytes = await workspace.cas.readBytes(history[n - 1]!.hash);
        assert.equal(new TextDecoder().decode(bytes), `version ${n}`);
      }
      assert.equal(await Deno.readTextFile(`${root}/notes.md`), "reborn");
    } finally {
      await workspace.close();
    }
  }));

Deno.test("Workspace write-through is recorded exactly once even though the watcher sees it", () =>
  withTempDir(async (root) => {
    const workspace = await open(root);
    try {
      await workspace.scan();
      await workspace.watch({ debounceMs: 20 });
      for (let n = 0; n < 20; n++) await workspace.writeBytes(`f${n % 4}.txt`, text(`w${n}`));
      // A real external edit after the burst proves the watcher is live and settled.
      await put(root, "external.txt", "from an editor");
      await waitFor("the external edit", () => workspace.store.latest("external.txt"));
      await workspace.settled();
      for (let n = 0; n < 4; n++) {
        assert.equal(workspace.store.history(`f${n}.txt`).length, 5, `f${n}.txt`);
      }
    } finally {
      await workspace.close();
    }
  }));

Deno.test("Workspace watcher records edits, renames, mode changes and deletions", () =>
  withTempDir(async (root) => {
    await put(root, "dir/a.txt", "a");
    const workspace = await open(root);
    try {
      await workspace.scan();
      await workspace.watch({ debounceMs: 20 });
      await Deno.rename(`${root}/dir`, `${root}/moved`);
      await waitFor(
        "rename",
        () => workspace.store.latest("moved/a.txt") && workspace.store.latest("dir/a.txt")?.deleted,
      );
      await Deno.chmod(`${root}/moved/a.txt`, 0o755);
      await waitFor(
        "mode change",
        () => (workspace.store.latest("moved/a.txt")!.mode & 0o777) === 0o755,
      );
      await Deno.remove(`${root}/moved/a.txt`);
      await waitFor("deletion", () => workspace.store.latest("moved/a.txt")!.deleted);
      const history = workspace.store.history("moved/a.txt");
      assert.deepEqual(history.map((i) => [i.iteration, i.deleted]), [[1, false], [2, false], [
        3,
        true,
      ]]);
      assert.equal(history[0]!.hash, sha256Hex(text("a")), "a rename keeps the content");
    } finally {
      await workspace.close();
    }
  }));

Deno.test("Workspace move() and chmod() record both sides and the mode", () =>
  withTempDir(async (root) => {
    const workspace = await open(root);
    try {
      await workspace.writeBytes("src/x.sh", text("#!/bin/sh\n"), { mode: 0o100644 });
      const moved = await workspace.move("src/x.sh", "bin/x.sh");
      assert.deepEqual(moved.map((i) => `${i.path}:${i.deleted}`).sort(), [
        "bin/x.sh:false",
        "bin:false", // the folder the move made
        "src/x.sh:true",
      ]);
      const changed = await workspace.chmod("bin/x.sh", 0o755);
      assert.equal(changed!.mode, 0o100755);
      assert.equal((await Deno.stat(`${root}/bin/x.sh`)).mode! & 0o777, 0o755);
    } finally {
      await workspace.close();
    }
  }));

Deno.test("Workspace honours --ignore patterns and .chronicleignore", () =>
  withTempDir(async (root) => {
    await put(root, ".chronicleignore", "*.log\nbuild/\n");
    await put(root, "app.log", "x");
    await put(root, "build/out.o", "x");
    await put(root, "node_modules/p/index.js", "x");
    await put(root, "src/keep.ts", "x");
    const workspace = await open(root, ["node_modules/"]);
    try {
      await workspace.scan();
      assert.deepEqual(workspace.store.list().map((i) => i.path), [
        ".chronicleignore",
        "src",
        "src/keep.ts",
      ]);
      await assert.rejects(() => workspace.writeBytes("x.log", text("no")), PathError);
    } finally {
      await workspace.close();
    }
  }));

Deno.test("Workspace records symlinks as links and never writes through a linked folder", () =>
  withTempDir(async (root) => {
    const outside = await Deno.makeTempDir();
    try {
      await Deno.symlink(outside, `${root}/escape`);
      await Deno.symlink("../etc/passwd", `${root}/rel-link`);
      const workspace = await open(root);
      try {
        await workspace.scan();
        const link = workspace.store.latest("escape")!;
        assert.equal(link.mode & 0o170000, S_IFLNK);
        assert.equal(new TextDecoder().decode(await workspace.cas.readBytes(link.hash)), outside);
        await assert.rejects(() => workspace.writeBytes("escape/pwned.txt", text("x")), PathError);
        assert.deepEqual([...Deno.readDirSync(outside)], [], "nothing written outside");
        // Recorded as found, but never written again: a link out of the workspace is refused.
        await assert.rejects(
          () => workspace.writeContent("copy-of-link", link.hash, link.mode),
          ForbiddenWriteError,
        );
        assert.equal(lstatOrNullSync(`${root}/copy-of-link`), null);
      } finally {
        await workspace.close();
      }
    } finally {
      await Deno.remove(outside, { recursive: true });
    }
  }));

Deno.test("Workspace refuses unsafe paths with a PathError", () =>
  withTempDir(async (root) => {
    const workspace = await open(root);
    try {
      for (const bad of ["../x", "/etc/passwd", "a\0b", ".chronicle/chronicle.db", ".git/config"]) {
        await assert.rejects(() => workspace.writeBytes(bad, text("x")), PathError, bad);
      }
    } finally {
      await workspace.close();
    }
  }));

Deno.test("Workspace stores a 50 MiB file in chunks, and a one-place edit adds only a few", () =>
  withTempDir(async (root) => {
    const size = 50 * 1024 * 1024;
    const bytes = new Uint8Array(size);
    let seed = 12345;
    for (let i = 0; i < size; i += 4) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      bytes[i] = seed & 0xff;
      bytes[i + 1] = (seed >>> 8) & 0xff;
      bytes[i + 2] = (seed >>> 16) & 0xff;
      bytes[i + 3] = seed >>> 24;
    }
    await put(root, "big.bin", bytes);
    const workspace = await open(root);
    try {
      await workspace.scan();
      const before = await workspace.cas.stats();
      bytes[size / 2] = bytes[size / 2]! ^ 0xff;
      await put(root, "big.bin", bytes);
      await workspace.scan();
      const after = await workspace.cas.stats();
      const first = await workspace.cas.manifest(workspace.store.iteration("big.bin", 1)!.hash);
      const second = await workspace.cas.manifest(workspace.store.iteration("big.bin", 2)!.hash);
      assert.ok(first && second, "both versions are chunked");
      const old = new Set(first.chunks.map((c) => c.hash));
      const added = second.chunks.filter((c) => !old.has(c.hash));
      assert.ok(added.length >= 1 && added.length <= 3, `${added.length} new chunks`);
      assert.ok(
        after.bytes - before.bytes < 10 * 1024 * 1024,
        `grew by ${after.bytes - before.bytes} bytes`,
      );
    } finally {
      await workspace.close();
    }
  }));

Deno.test("Workspace writes files and links whose names are 250 bytes long", () =>
  withTempDir(async (root) => {
    const ascii = "a".repeat(250);
    const accented = "é".repeat(125); // 250 bytes in UTF-8: the temp name is cut between characters
    const workspace = await open(root);
    try {
      for (const name of [ascii, accented]) {
        await workspace.writeBytes(`long/${name}`, text(name.slice(0, 3)));
        assert.equal(await Deno.readTextFile(`${root}/long/${name}`), name.slice(0, 3));
        const link = await workspace.cas.putBytes(text("target"));
        await workspace.writeContent(`links/${name}`, link.hash, S_IFLNK | 0o777);
        assert.equal(await Deno.readLink(`${root}/links/${name}`), "target");
        await writeSymlinkAtomic(`${root}/links/${name}`, "elsewhere"); // as a snapshot restores
        assert.equal(await Deno.readLink(`${root}/links/${name}`), "elsewhere");
      }
      assert.equal(workspace.store.latest(`long/${accented}`)?.size, 6);
      const leftovers = [...Deno.readDirSync(`${root}/long`), ...Deno.readDirSync(`${root}/links`)]
        .filter((entry) => entry.name.startsWith("."));
      assert.deepEqual(leftovers, [], "no temp file left behind");
    } finally {
      await workspace.close();
    }
  }));

Deno.test("Workspace.writeBytes() stores large content in chunks and small content whole", () =>
  withTempDir(async (root) => {
    const large = new Uint8Array(CHUNKING_THRESHOLD + 1024);
    for (let i = 0; i < large.length; i++) large[i] = (i * 7919) % 251;
    const workspace = await open(root);
    try {
      const big = await workspace.writeBytes("big.bin", large);
      const small = await workspace.writeBytes("small.txt", text("small"));
      assert.equal(big?.hash, sha256Hex(large));
      assert.ok(await workspace.cas.manifest(big.hash), "large content is chunked");
      assert.deepEqual(await workspace.cas.readBytes(big.hash), large);
      assert.equal(await workspace.cas.manifest(small!.hash), null, "small content is whole");
      assert.deepEqual(await workspace.cas.readBytes(small!.hash), text("small"));
      assert.deepEqual(await Deno.readFile(`${root}/big.bin`), large);
    } finally {
      await workspace.close();
    }
  }));

/**
 * Runs `body` with a scanned workspace over `root` holding `src/a.txt`, and a way to write
 * that file which no event in the workspace's folders reports (through a hard link
 * elsewhere): only a scan can notice such a change. That write truncates, then writes, so a
 * scan may record the empty file in between: wait for content, never for an iteration number.
 */
async function withUnreportedWrites(
  root: string,
  body: (
    workspace: Workspace,
    writeUnreported: (content: string) => Promise<void>,
  ) => Promise<void>,
): Promise<void> {
  const outside = await Deno.makeTempDir();
  try {
    await put(root, "src/a.txt", "before");
    const workspace = await open(root);
    try {
      await workspace.scan();
      await Deno.link(`${root}/src/a.txt`, `${outside}/alias.txt`);
      await body(workspace, async (content) => {
        const file = await Deno.open(`${outside}/alias.txt`, { write: true, truncate: true });
        await file.write(text(content));
        file.close();
      });
    } finally {
      await workspace.close();
    }
  } finally {
    await Deno.remove(outside, { recursive: true });
  }
}

/** Whether the latest recorded version of `src/a.txt` holds `content`. */
function isLatest(workspace: Workspace, content: string): boolean {
  return workspace.store.latest("src/a.txt")?.hash === sha256OfText(content);
}

Deno.test("Workspace safety rescan records a change the watcher never heard of", () =>
  withTempDir((root) =>
    withUnreportedWrites(root, async (workspace, writeUnreported) => {
      await workspace.watch({ debounceMs: 20, rescanMs: 200 });
      await writeUnreported("AFTER!");
      await waitFor("the rescan", () => isLatest(workspace, "AFTER!"));
      const bytes = await workspace.cas.readBytes(workspace.store.latest("src/a.txt")!.hash);
      assert.equal(new TextDecoder().decode(bytes), "AFTER!");
    })
  ));

Deno.test("Workspace safety rescans stop while watching is suspended, and start again with the resume", () =>
  withTempDir((root) =>
    withUnreportedWrites(root, async (workspace, writeUnreported) => {
      await workspace.watch({ debounceMs: 20, rescanMs: 50 });
      await workspace.suspendWatching();
      await writeUnreported("while suspended");
      // Forty rescan intervals: rescans still running would have recorded it by now.
      const fortyIntervalsLater = Date.now() + 40 * 50;
      await waitFor("forty rescan intervals", () => Date.now() >= fortyIntervalsLater);
      await workspace.settled();
      assert.equal(workspace.store.latest("src/a.txt")?.iteration, 1, "no rescan while suspended");
      await workspace.resumeWatching();
      assert.ok(isLatest(workspace, "while suspended"), "the resume's scan records it");
      await writeUnreported("after the resume");
      await waitFor("a safety rescan again", () => isLatest(workspace, "after the resume"));
    })
  ));

Deno.test("Workspace.watch() records at once what changed between the last scan and the watch", () =>
  withTempDir(async (root) => {
    await put(root, "src/a.txt", "a");
    const workspace = await open(root);
    try {
      await workspace.scan();
      // Before any watch exists: no event will ever tell of these (the safety rescan is far).
      await put(root, "src/b.txt", "b");
      await put(root, "src/deep/c.txt", "c");
      await workspace.watch({ debounceMs: 20, rescanMs: 600_000 });
      await waitFor(
        "the scan that watch() starts",
        () =>
          workspace.store.latest("src/b.txt")?.deleted === false &&
          workspace.store.latest("src/deep/c.txt")?.deleted === false,
      );
      assert.equal(
        workspace.store.latest("src/a.txt")?.iteration,
        1,
        "unchanged: not recorded again",
      );
    } finally {
      await workspace.close();
    }
  }));

Deno.test("Workspace watching suspended: changes wait for the resume, whose scan records them", () =>
  withTempDir(async (root) => {
    const workspace = await open(root);
    try {
      await workspace.scan();
      await workspace.resumeWatching();
      assert.equal(workspace.watching, false, "resuming never starts a watcher watch() did not");
      await workspace.watch({ debounceMs: 20, rescanMs: 600_000 });
      assert.equal(workspace.watching, true);
      await workspace.suspendWatching();
      assert.equal(workspace.watching, false);
      await put(root, "while-suspended.txt", "unwatched");
      await put(root, "new-folder/inside.txt", "in a folder made meanwhile");
      await workspace.resumeWatching();
      assert.equal(workspace.watching, true);
      assert.ok(workspace.store.latest("while-suspended.txt"), "the resume's scan records it");
      assert.ok(workspace.store.latest("new-folder/inside.txt"));
      // Only the watcher can record this (the rescan is minutes away), in a folder that
      // did not exist when watching was suspended.
      await put(root, "new-folder/after.txt", "watched again");
      await waitFor("the watcher's record", () => workspace.store.latest("new-folder/after.txt"));
    } finally {
      await workspace.close();
    }
  }));

Deno.test("Workspace records a file replaced by a folder as a deletion first, whatever path it is told of", () =>
  withTempDir(async (root) => {
    await put(root, "x", "x is a file");
    const workspace = await open(root);
    try {
      await workspace.scan();
      await Deno.remove(`${root}/x`);
      await put(root, "x/inside.txt", "x is a folder");
      // Told only of the new file (as when its writer closed it before the removal's
      // event was handled): the replaced file becomes a folder with it, first.
      const { recorded } = await workspace.capture(["x/inside.txt"]);
      assert.deepEqual(
        recorded.map((i) => `${i.path}${i.deleted ? " deleted" : ""}:${i.mode.toString(8)}`),
        [`x:${(0o40000 | 0o755).toString(8)}`, "x/inside.txt:100644"],
      );
      assert.equal(recorded[0]!.sequence + 1, recorded[1]!.sequence);
    } finally {
      await workspace.close();
    }
  }));

Deno.test("Workspace.scan() of an unchanged tree writes nothing, even while another process holds the write lock", () =>
  withTempDir(async (root) => {
    for (let i = 0; i < 20; i++) await put(root, `d/${i}.txt`, `file ${i}`);
    const workspace = await open(root);
    const other = new DatabaseSync(workspace.layout.database);
    try {
      await workspace.scan();
      // Make every file's stat trustworthy again (older than the racy window).
      const old = new Date(Date.now() - 10_000);
      for (let i = 0; i < 20; i++) await Deno.utime(`${root}/d/${i}.txt`, old, old);
      await workspace.scan();
      other.exec("BEGIN IMMEDIATE");
      const { recorded } = await workspace.scan(); // would wait out the busy timeout, then fail
      assert.deepEqual(recorded, []);
      other.exec("ROLLBACK");
    } finally {
      other.close();
      await workspace.close();
    }
  }));

/** Three scan slices' worth of files in the seven folders of `t/`; how many. */
async function putSlicesOfFiles(root: string): Promise<number> {
  const files = 3 * SCAN_SLICE;
  for (let i = 0; i < files; i++) await put(root, `t/${i % 7}/${i}.txt`, `file ${i}`);
  return files;
}

Deno.test("Workspace.scan() gives timers a turn between its slices", () =>
  withTempDir(async (root) => {
    // A slice's reads and records are synchronous: a timer (the heap keeper's look, a
    // heartbeat) that could only run once the scan ended would see nothing or everything.
    await putSlicesOfFiles(root);
    const workspace = await open(root);
    try {
      const seenByTimers: number[] = [];
      const tick = () => {
        seenByTimers.push(workspace.store.sequence());
        timer = setTimeout(tick, 0);
      };
      let timer = setTimeout(tick, 0);
      const scanned = await workspace.scan();
      clearTimeout(timer);
      const last = Math.max(...scanned.recorded.map((iteration) => iteration.sequence));
      assert.ok(
        seenByTimers.some((sequence) => sequence > 0 && sequence < last),
        `a timer ran between two slices (sequences seen by timers: ${seenByTimers})`,
      );
    } finally {
      await workspace.close();
    }
  }));

Deno.test("Workspace.scan() records a large tree in slices, and a write queued meanwhile waits for one slice only", () =>
  withTempDir(async (root) => {
    const files = await putSlicesOfFiles(root);
    const workspace = await open(root);
    try {
      let write: Promise<unknown> | undefined;
      const slices: number[] = [];
      const stop = workspace.store.onRecorded((recorded) => {
        if (recorded[0]?.path === "between.txt") return;
        slices.push(recorded.length);
        // Queued once the first slice is recorded: it must not wait for the others.
        write ??= workspace.writeBytes("between.txt", text("written mid-scan"));
      });
      const scanned = await workspace.scan();
      stop();
      await write;
      const folders = 1 + 7; // t, t/0 … t/6: recorded first
      assert.equal(scanned.recorded.length, files + folders);
      assert.deepEqual(slices, [SCAN_SLICE, SCAN_SLICE, SCAN_SLICE + folders]);
      const between = workspace.store.latest("between.txt")!.sequence;
      const sequences = scanned.recorded.map((iteration) => iteration.sequence);
      assert.ok(
        Math.min(...sequences) < between && between < Math.max(...sequences),
        `the write (sequence ${between}) recorded between the scan's slices`,
      );
      assert.deepEqual((await workspace.scan()).recorded, [], "nothing changed since");
    } finally {
      await workspace.close();
    }
  }));

Deno.test("Workspace.scan() alone takes larger and larger slices: fewer commits", () =>
  withTempDir(async (root) => {
    for (let i = 0; i < 7 * SCAN_SLICE; i++) await put(root, `u/${i}.txt`, `file ${i}`);
    const workspace = await open(root);
    try {
      const slices: number[] = [];
      const stop = workspace.store.onRecorded((recorded) => slices.push(recorded.length));
      await workspace.scan();
      stop();
      assert.deepEqual(slices, [SCAN_SLICE, 2 * SCAN_SLICE, 4 * SCAN_SLICE, 1]); // and u
    } finally {
      await workspace.close();
    }
  }));

Deno.test("a workspace whose data folder or folder is removed records nothing more, and says what is gone", async () => {
  await withTempDir(async (dir) => {
    const root = `${dir}/ws`;
    await put(root, "kept.txt", "kept");
    const ws = await Workspace.open({ root });
    try {
      await ws.scan();
      assert.equal(ws.gone(), null);
      // `rm -rf` of the data folder, then of everything: no removal to record.
      await Deno.remove(ws.layout.dataDir, { recursive: true });
      assert.equal(ws.gone(), `the data folder "${ws.layout.dataDir}" was removed`);
      await Deno.remove(root, { recursive: true });
      assert.equal(ws.gone(), `the workspace folder "${root}" was removed`);
      await assert.rejects(ws.scan(), WorkspaceGoneError);
      await assert.rejects(ws.capture(["kept.txt"]), /was removed: nothing more is recorded/);
      assert.equal(ws.store.latest("kept.txt")?.deleted, false);
    } finally {
      await ws.close().catch(() => {});
    }
  });
});
