/**
 * `WorkspaceChange.unchangedSince`: a change replaces or removes only what its caller saw
 * at the path. A file written by someone else after that look, exactly between the look
 * and the write (injected through the executor's hook, not by timing), is left as it is
 * and the change fails with `ChangedOnDiskError`.
 */
import assert from "node:assert/strict";
import { sha256Hex } from "../../lib/cas/mod.ts";
import { type DiskStamp, stampOf } from "../../lib/disk/mod.ts";
import {
  ChangedOnDiskError,
  type DiskOperation,
  FOLDER_HASH,
  Workspace,
  type WorkspaceChange,
} from "../../lib/workspace/mod.ts";
import { put, readText, withTempDir } from "../_helpers/temp_dir.ts";

const text = (s: string) => new TextEncoder().encode(s);
const TARGET = text("elsewhere.txt");

/** The change each case makes to "f.txt", replacing what the stamp says is there. */
const CHANGES: Record<string, (unchangedSince: DiskStamp) => WorkspaceChange> = {
  write: (unchangedSince) => ({
    path: "f.txt",
    hash: sha256Hex(text("the caller's")),
    mode: 0o100644,
    bytes: text("the caller's"),
    unchangedSince,
  }),
  link: (unchangedSince) => ({
    path: "f.txt",
    hash: sha256Hex(TARGET),
    mode: 0o120777,
    bytes: TARGET,
    unchangedSince,
  }),
  remove: (unchangedSince) => ({ path: "f.txt", remove: true, unchangedSince }),
};

Deno.test("Workspace.applyChanges() with unchangedSince replaces only what its caller saw", async (t) => {
  const cases = Object.keys(CHANGES).flatMap((kind) => [
    {
      description: `a ${kind} over the file seen is made`,
      input: { kind, someoneWrites: null },
      expected: { failed: false },
    },
    {
      // In place, as an editor or `echo >` does (truncate, write): same inode.
      description: `a ${kind} over a file rewritten in place after the look is refused`,
      input: { kind, someoneWrites: "in place" },
      expected: { failed: true },
    },
    {
      description: `a ${kind} over a file renamed over it after the look is refused`,
      input: { kind, someoneWrites: "renamed over" },
      expected: { failed: true },
    },
  ]);
  for (const { description, input, expected } of cases) {
    await t.step(description, () =>
      withTempDir(async (root) => {
        await put(root, "f.txt", "seen by the caller");
        const theirs = "someone else's, written after the look";
        const operations: DiskOperation[] = ["write", "link", "remove"];
        const workspace = await Workspace.open({
          root,
          hooks: {
            // Runs inside the executor, after the caller's look and before the change.
            beforeCheck: async (path, operation) => {
              if (path !== "f.txt" || !operations.includes(operation)) return;
              if (input.someoneWrites === "in place") {
                await Deno.writeTextFile(`${root}/f.txt`, theirs);
              } else if (input.someoneWrites === "renamed over") {
                await put(root, "other.txt", theirs);
                await Deno.rename(`${root}/other.txt`, `${root}/f.txt`);
              }
            },
          },
        });
        try {
          await workspace.scan();
          const stamp = stampOf(Deno.lstatSync(`${root}/f.txt`));
          const { failed } = await workspace.applyChanges([CHANGES[input.kind]!(stamp)]);
          if (!expected.failed) {
            assert.deepEqual(failed, []);
            const info = await Deno.lstat(`${root}/f.txt`).catch(() => null);
            if (input.kind === "remove") assert.equal(info, null);
            else if (input.kind === "link") assert.ok(info?.isSymlink);
            else assert.equal(await readText(`${root}/f.txt`), "the caller's");
            return;
          }
          assert.equal(failed.length, 1);
          assert.ok(failed[0]!.error instanceof ChangedOnDiskError, String(failed[0]!.error));
          assert.equal(await readText(`${root}/f.txt`), theirs, "left as it is");
          assert.ok(Deno.lstatSync(`${root}/f.txt`).isFile);
        } finally {
          await workspace.close();
        }
      }));
  }
});

Deno.test("Workspace.applyChanges() with onlyOwnChanges never records someone else's change right after ours as ours", async (t) => {
  const folder = { path: "f.txt", hash: FOLDER_HASH, mode: 0o40750 };
  const removal = { path: "f.txt", remove: true as const };
  const writeTheirs = (root: string) => Deno.writeTextFile(`${root}/f.txt`, "theirs");
  const cases = [
    {
      // It came after the removal: the removal is recorded, then it, as local.
      description: "a file written where one was removed: recorded after the removal, as local",
      input: { change: removal, onlyOwnChanges: true, theirs: writeTheirs },
      expected: { failed: false, recorded: [["master", true], ["local", false]] },
    },
    {
      description: "a folder's mode changed right after ours: recorded after ours, as local",
      input: {
        change: folder,
        onlyOwnChanges: true,
        theirs: (root: string) => Deno.chmod(`${root}/f.txt`, 0o755),
      },
      expected: { failed: false, recorded: [["master", false], ["local", false]] },
    },
    {
      description: "a folder made, then removed right after: unrecorded, and reported",
      input: {
        change: folder,
        onlyOwnChanges: true,
        theirs: (root: string) => Deno.remove(`${root}/f.txt`),
      },
      expected: { failed: true, recorded: [] },
    },
    {
      description: "without onlyOwnChanges, what is there is recorded with the change's origin",
      input: { change: removal, onlyOwnChanges: false, theirs: writeTheirs },
      expected: { failed: false, recorded: [["master", false]] },
    },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () =>
      withTempDir(async (root) => {
        await put(root, "f.txt", "recorded");
        const workspace = await Workspace.open({
          root,
          hooks: {
            // Someone else's change, right after ours and before it is recorded.
            afterChange: async (path) => {
              if (path === "f.txt") await input.theirs(root);
            },
          },
        });
        try {
          await workspace.scan();
          const before = workspace.store.latest("f.txt")!;
          const { failed, recorded } = await workspace.applyChanges([input.change], {
            origin: "master",
            onlyOwnChanges: input.onlyOwnChanges,
          });
          const origins = recorded.map((it) => [it.origin, it.deleted]);
          assert.deepEqual(origins, expected.recorded);
          if (!expected.failed) {
            assert.deepEqual(failed, []);
            return;
          }
          assert.equal(failed.length, 1);
          assert.ok(failed[0]!.error instanceof ChangedOnDiskError, String(failed[0]!.error));
          assert.deepEqual(recorded, [], "nothing recorded as the master's");
          assert.deepEqual(workspace.store.latest("f.txt"), before);
          // The next look records it, as the local change it is.
          await workspace.scan({ keepRecorded: false });
          assert.equal(workspace.store.latest("f.txt")?.origin, "local");
        } finally {
          await workspace.close();
        }
      }));
  }
});
