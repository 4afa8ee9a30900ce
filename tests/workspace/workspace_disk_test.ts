/**
 * The one workspace executor (`WorkspaceDisk`) and its rules: pure rules by tables, the
 * executor on real temp folders with hooks that swap a folder or a file for a link
 * underneath it, and the writers built on it (Workspace, the snapshot DiskWriter).
 */
import assert from "node:assert/strict";
import { sha256Hex } from "../../lib/cas/mod.ts";
import { lstatOrNullSync } from "../../lib/disk/mod.ts";
import { PathError } from "../../lib/paths/mod.ts";
import { DiskWriter } from "../../lib/snapshot/mod.ts";
import {
  bytesWriteMode,
  type DiskOperation,
  FOLDER_HASH,
  ForbiddenWriteError,
  linkTargetProblem,
  maskMode,
  Workspace,
  type WorkspaceChange,
  WorkspaceDisk,
} from "../../lib/workspace/mod.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

Deno.test("linkTargetProblem() allows relative targets that stay inside, and only those", async (t) => {
  const cases = [
    { description: "a sibling", input: ["a.txt", "b.txt"], expected: null },
    { description: "up one from a folder", input: ["d/l", "../a.txt"], expected: null },
    { description: "the root", input: ["d/l", ".."], expected: null },
    { description: "dangling but inside", input: ["l", "missing/x"], expected: null },
    { description: "absolute", input: ["l", "/etc/passwd"], expected: "absolute" },
    { description: "up from the root", input: ["l", "../x"], expected: "leaves" },
    { description: "up too far from a folder", input: ["d/e/l", "../../../x"], expected: "leaves" },
    { description: "down then out", input: ["l", "a/../../x"], expected: "leaves" },
    { description: "empty", input: ["l", ""], expected: "empty" },
    { description: "NUL", input: ["l", "a\0b"], expected: "NUL" },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => {
      const problem = linkTargetProblem(input[0]!, input[1]!);
      if (expected === null) assert.equal(problem, null);
      else assert.ok(problem?.includes(expected), `${problem}`);
    });
  }
});

Deno.test("maskMode() keeps the type and only the allowed permission bits", async (t) => {
  const cases = [
    { description: "setuid dropped", input: [0o104755, 0o777], expected: 0o100755 },
    { description: "all special bits dropped", input: [0o107777, 0o777], expected: 0o100777 },
    { description: "bits alone", input: [0o4755, 0o777], expected: 0o755 },
    { description: "a stricter list", input: [0o100777, 0o755], expected: 0o100755 },
    { description: "setgid allowed when listed", input: [0o102755, 0o2777], expected: 0o102755 },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => assert.equal(maskMode(input[0]!, input[1]!), expected));
  }
});

Deno.test("bytesWriteMode() picks a regular file's mode and refuses links and other types", async (t) => {
  const none = { linkOnDisk: false, recordedMode: undefined, given: undefined };
  const cases = [
    { description: "nothing recorded: 0644", input: none, expected: { mode: 0o100644 } },
    {
      description: "the recorded mode is kept",
      input: { ...none, recordedMode: 0o100755 },
      expected: { mode: 0o100755 },
    },
    {
      description: "the given mode wins",
      input: { ...none, recordedMode: 0o100755, given: 0o100600 },
      expected: { mode: 0o100600 },
    },
    {
      description: "permission bits alone",
      input: { ...none, given: 0o640 },
      expected: { mode: 0o640 },
    },
    {
      description: "a link on disk",
      input: { ...none, linkOnDisk: true, given: 0o100644 },
      expected: { problem: "symbolic link" },
    },
    {
      description: "a link as recorded",
      input: { ...none, recordedMode: 0o120777 },
      expected: { problem: "symbolic link" },
    },
    {
      description: "a folder's mode given",
      input: { ...none, given: 0o40755 },
      expected: { problem: "not a regular file's" },
    },
    {
      description: "a link's mode given",
      input: { ...none, given: 0o120777 },
      expected: { problem: "not a regular file's" },
    },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => {
      const decision = bytesWriteMode(input);
      if ("mode" in expected) assert.deepEqual(decision, expected);
      else assert.ok("problem" in decision && decision.problem.includes(expected.problem));
    });
  }
});

/** A root and an outside folder with `file` (mode 0644) in it. */
function withRoots(fn: (root: string, outside: string) => Promise<void>): Promise<void> {
  return withTempDir(async (base) => {
    const root = `${base}/ws`;
    const outside = `${base}/outside`;
    await Deno.mkdir(`${root}/d`, { recursive: true });
    await Deno.mkdir(outside);
    await Deno.writeTextFile(`${outside}/file`, "outside");
    await Deno.chmod(`${outside}/file`, 0o644);
    await Deno.writeTextFile(`${root}/d/file`, "inside");
    await fn(root, outside);
  });
}

/** A hook that, before the first check, replaces folder `d` by a link out of the workspace. */
function swapFolderForLink(root: string, outside: string) {
  return async (_path: string, _operation: DiskOperation) => {
    if (lstatOrNullSync(`${root}/d`)?.isSymlink) return;
    await Deno.remove(`${root}/d`, { recursive: true });
    await Deno.symlink(outside, `${root}/d`);
  };
}

Deno.test("WorkspaceDisk refuses every operation under a folder swapped for a link underneath it", async (t) => {
  const operations: Array<[string, (disk: WorkspaceDisk) => Promise<unknown>]> = [
    ["write", (disk) => disk.prepareFile("d/file")],
    ["link", (disk) => disk.writeLink("d/l", "file")],
    ["chmod", (disk) => disk.chmod("d/file", 0o777)],
    ["remove", (disk) => disk.remove("d/file")],
    ["mkdir", (disk) => disk.mkdir("d/sub")],
    ["makeFolder", (disk) => disk.makeFolder("d/sub", 0o755)],
  ];
  for (const [name, operation] of operations) {
    await t.step(name, () =>
      withRoots(async (root, outside) => {
        const disk = new WorkspaceDisk(root, {
          hooks: { beforeCheck: swapFolderForLink(root, outside) },
        });
        await assert.rejects(() => operation(disk), PathError);
        assert.deepEqual([...Deno.readDirSync(outside)].map((e) => e.name), ["file"]);
        assert.equal((Deno.statSync(`${outside}/file`).mode ?? 0) & 0o777, 0o644);
        assert.equal(Deno.readTextFileSync(`${outside}/file`), "outside");
      }));
  }
});

Deno.test("WorkspaceDisk never follows a final link: chmod refused, remove unlinks", () =>
  withRoots(async (root, outside) => {
    await Deno.symlink(`${outside}/file`, `${root}/victim`);
    const disk = new WorkspaceDisk(root);
    await assert.rejects(() => disk.chmod("victim", 0o777), ForbiddenWriteError);
    assert.equal((Deno.statSync(`${outside}/file`).mode ?? 0) & 0o777, 0o644);
    await disk.chmod("d/file", 0o600);
    assert.equal((Deno.statSync(`${root}/d/file`).mode ?? 0) & 0o777, 0o600);
    assert.equal(await disk.remove("victim"), true);
    assert.equal(lstatOrNullSync(`${root}/victim`), null);
    assert.equal(Deno.readTextFileSync(`${outside}/file`), "outside");
  }));

Deno.test("WorkspaceDisk.makeFolder() leaves a folder with exactly the mode's bits, or refuses", async (t) => {
  const cases = [
    {
      description: "new, the umask's usual bits",
      input: { path: "n", mode: 0o40755 },
      expected: 0o755,
    },
    {
      description: "new, bits the umask takes",
      input: { path: "n", mode: 0o777 },
      expected: 0o777,
    },
    {
      description: "new, with its parents",
      input: { path: "a/b/c", mode: 0o700 },
      expected: 0o700,
    },
    { description: "new, setgid", input: { path: "g", mode: 0o2775 }, expected: 0o2775 },
    { description: "existing, bits changed", input: { path: "d", mode: 0o711 }, expected: 0o711 },
    { description: "a file in the way", input: { path: "d/file", mode: 0o755 }, expected: null },
    { description: "a link in the way", input: { path: "l", mode: 0o755 }, expected: null },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () =>
      withRoots(async (root, outside) => {
        await Deno.symlink(outside, `${root}/l`);
        const disk = new WorkspaceDisk(root);
        if (expected === null) {
          await assert.rejects(() => disk.makeFolder(input.path, input.mode), PathError);
          assert.equal((Deno.statSync(outside).mode ?? 0) & 0o7777, 0o755 & ~Deno.umask());
          return;
        }
        await disk.makeFolder(input.path, input.mode);
        const info = Deno.lstatSync(`${root}/${input.path}`);
        assert.ok(info.isDirectory);
        assert.equal((info.mode ?? 0) & 0o7777, expected);
      }));
  }
});

Deno.test("WorkspaceDisk.makeFolder() with a batch's set notes the folders it found or made, and never one behind a link", () =>
  withRoots(async (root, outside) => {
    await Deno.symlink(outside, `${root}/l`);
    const disk = new WorkspaceDisk(root);
    const checked = new Map<string, number>();
    await disk.makeFolder("a/b/c", 0o755, checked);
    await disk.makeFolder("a/b/d", 0o755, checked);
    assert.deepEqual([...checked.keys()].sort(), ["a", "a/b", "a/b/c", "a/b/d"]);
    const device = Deno.statSync(root).dev;
    assert.ok([...checked.values()].every((dev) => dev === device), "each with its device");
    await assert.rejects(() => disk.makeFolder("l/x", 0o755, checked), PathError);
    await assert.rejects(() => disk.makeFolder("l", 0o755, checked), PathError);
    assert.equal(checked.has("l"), false, "a link is never noted as a folder");
    assert.equal(lstatOrNullSync(`${outside}/x`), null, "nothing made through the link");
  }));

Deno.test("WorkspaceDisk: a file swapped for a link just before a chmod is refused", () =>
  withRoots(async (root, outside) => {
    const disk = new WorkspaceDisk(root, {
      hooks: {
        beforeCheck: async (path, operation) => {
          if (operation !== "chmod") return;
          await Deno.remove(`${root}/${path}`);
          await Deno.symlink(`${outside}/file`, `${root}/${path}`);
        },
      },
    });
    await assert.rejects(() => disk.chmod("d/file", 0o777), ForbiddenWriteError);
    assert.equal((Deno.statSync(`${outside}/file`).mode ?? 0) & 0o777, 0o644);
  }));

Deno.test("Workspace.applyChanges() reports a change whose folder became a link underneath it, and writes nothing out", () =>
  withRoots(async (root, outside) => {
    const workspace = await Workspace.open({
      root,
      hooks: { beforeCheck: swapFolderForLink(root, outside) },
    });
    try {
      const bytes = new TextEncoder().encode("pwned");
      const { failed, recorded } = await workspace.applyChanges([
        { path: "d/new.txt", hash: sha256Hex(bytes), mode: 0o100644, bytes },
      ]);
      assert.equal(failed.length, 1);
      assert.ok(failed[0]!.error instanceof PathError, String(failed[0]!.error));
      assert.deepEqual(recorded, []);
      assert.deepEqual([...Deno.readDirSync(outside)].map((e) => e.name), ["file"]);
    } finally {
      await workspace.close();
    }
  }));

Deno.test("Workspace.applyChanges() makes, sets and removes folders through the executor: never through a link", async (t) => {
  const cases: Array<{ description: string; input: WorkspaceChange }> = [
    { description: "a new folder", input: { path: "d/new", hash: FOLDER_HASH, mode: 0o040700 } },
    {
      description: "a folder's mode",
      input: { path: "d/empty", hash: FOLDER_HASH, mode: 0o040700 },
    },
    {
      description: "an empty folder removed",
      input: { path: "d/empty", remove: true, onlyEmptyFolder: true },
    },
  ];
  for (const { description, input } of cases) {
    await t.step(description, () =>
      withRoots(async (root, outside) => {
        await Deno.mkdir(`${outside}/empty`, { mode: 0o755 });
        await Deno.chmod(`${outside}/empty`, 0o755);
        await Deno.mkdir(`${root}/d/empty`); // the one the change means, inside
        const workspace = await Workspace.open({
          root,
          hooks: { beforeCheck: swapFolderForLink(root, outside) },
        });
        try {
          const { failed, recorded } = await workspace.applyChanges([input]);
          assert.equal(failed.length, 1);
          assert.ok(failed[0]!.error instanceof PathError, String(failed[0]!.error));
          assert.deepEqual(recorded, []);
          const names = [...Deno.readDirSync(outside)].map((e) => e.name).sort();
          assert.deepEqual(names, ["empty", "file"]);
          assert.equal(Deno.statSync(`${outside}/empty`).mode! & 0o7777, 0o755);
        } finally {
          await workspace.close();
        }
      }));
  }
});

Deno.test("DiskWriter (rollback and restore) goes through the same executor and its rules", () =>
  withRoots(async (root, outside) => {
    const workspace = await Workspace.open({ root });
    try {
      const target = await workspace.cas.putBytes(new TextEncoder().encode(outside));
      const writer = new DiskWriter(root, workspace.cas, {
        hooks: { beforeCheck: swapFolderForLink(root, outside) },
      });
      await assert.rejects(
        () => writer.writeContent("l", target.hash, 0o120777),
        ForbiddenWriteError,
      );
      await assert.rejects(
        () => writer.writeBytes("d/x", new TextEncoder().encode("x")),
        PathError,
      );
      assert.deepEqual([...Deno.readDirSync(outside)].map((e) => e.name), ["file"]);
    } finally {
      await workspace.close();
    }
  }));
