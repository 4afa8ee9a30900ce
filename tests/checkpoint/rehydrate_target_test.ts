import { deepStrictEqual as assertEquals, ok, rejects, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { Cas } from "../../lib/cas/mod.ts";
import { checkpoint, CheckpointError, rehydrate } from "../../lib/checkpoint/mod.ts";
import { lstatOrNull } from "../../lib/disk/mod.ts";
import { S_IFLNK, S_IFREG, Store } from "../../lib/store/mod.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";
import { recordContent } from "./_record.ts";

/** A checkpoint (with objects) of a store holding notes.md "v1", keep.txt "same" and a link. */
async function makeCheckpoint(dir: string): Promise<string> {
  const data = join(dir, "source-data");
  await Deno.mkdir(data, { recursive: true });
  const store = Store.open(join(data, "chronicle.db"));
  const cas = await Cas.open(join(data, "cas"), { db: store.db });
  try {
    for (
      const [path, text, mode] of [
        ["notes.md", "v1", S_IFREG | 0o644],
        ["keep.txt", "same", S_IFREG | 0o644],
        ["docs/link", "../notes.md", S_IFLNK | 0o777],
      ] as const
    ) {
      await recordContent(store, cas, path, text, mode);
    }
  } finally {
    store.close();
  }
  const output = join(dir, "ckpt");
  await checkpoint({
    database: join(data, "chronicle.db"),
    casDir: join(data, "cas"),
    output,
    withObjects: true,
  });
  return output;
}

function into(from: string, target: string, force = false) {
  return rehydrate({
    from,
    database: join(target, ".chronicle", "chronicle.db"),
    casDir: join(target, ".chronicle", "cas"),
    workspace: target,
    force,
  });
}

Deno.test("rehydrate() refuses a non-empty workspace unless forced, naming what would be replaced", async (t) => {
  await withTempDir(async (dir) => {
    const from = await makeCheckpoint(dir);
    const target = join(dir, "target");
    await Deno.mkdir(join(target, "docs"), { recursive: true });
    await Deno.writeTextFile(join(target, "notes.md"), "precious");
    await Deno.writeTextFile(join(target, "keep.txt"), "same");
    await Deno.symlink("elsewhere", join(target, "docs/link"));

    await t.step(
      "refused: the message names the replaced files, nothing is installed",
      async () => {
        await rejects(into(from, target), (error: unknown) => {
          ok(error instanceof CheckpointError);
          ok(error.message.includes(`Workspace "${target}" is not empty`), error.message);
          ok(
            error.message.includes('replace 2 file(s) there: "docs/link", "notes.md"'),
            error.message,
          );
          ok(!error.message.includes("keep.txt"), "an identical file is not replaced");
          ok(error.message.includes("--force"), error.message);
          return true;
        });
        strictEqual(await Deno.readTextFile(join(target, "notes.md")), "precious");
        strictEqual(await lstatOrNull(join(target, ".chronicle", "chronicle.db")), null);
      },
    );

    await t.step("--force replaces them and says which", async () => {
      const result = await into(from, target, true);
      assertEquals(result.replaced, ["docs/link", "notes.md"]);
      assertEquals(result.problems, []);
      strictEqual(await Deno.readTextFile(join(target, "notes.md")), "v1");
      strictEqual(await Deno.readLink(join(target, "docs/link")), "../notes.md");
    });
  }, "chronicle-rehydrate-target-");
});

Deno.test("rehydrate() takes an empty or missing workspace, or one holding only its data folder", async (t) => {
  await withTempDir(async (dir) => {
    const from = await makeCheckpoint(dir);
    const cases = [
      { description: "missing folder", prepare: async (_target: string) => {} },
      { description: "empty folder", prepare: (target: string) => Deno.mkdir(target) },
      {
        description: "only the data folder, with an unrelated file inside it",
        prepare: async (target: string) => {
          await Deno.mkdir(join(target, ".chronicle"), { recursive: true });
          await Deno.writeTextFile(join(target, ".chronicle", "config.yaml"), "quiet: true\n");
        },
      },
    ];
    for (const [index, { description, prepare }] of cases.entries()) {
      await t.step(description, async () => {
        const target = join(dir, `t${index}`);
        await prepare(target);
        const result = await into(from, target);
        assertEquals([result.files, result.symlinks, result.replaced], [2, 1, []]);
      });
    }
    await t.step(
      "an unrelated file is enough to refuse, saying none would be replaced",
      async () => {
        const target = join(dir, "unrelated");
        await Deno.mkdir(target);
        await Deno.writeTextFile(join(target, "mine.txt"), "x");
        await rejects(into(from, target), /it holds "mine\.txt" \(none would be replaced/);
      },
    );
  }, "chronicle-rehydrate-target-");
});
