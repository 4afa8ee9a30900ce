import { ok, rejects, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { Cas } from "../../lib/cas/mod.ts";
import { checkpointCommand, rehydrateCommand } from "../../lib/cli/checkpoint_commands.ts";
import { CliError, UsageError } from "../../lib/cli/errors.ts";
import { WORKSPACE_ROOT_META } from "../../lib/store/mod.ts";
import { S_IFREG, Store } from "../../lib/store/mod.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

Deno.test("checkpoint and rehydrate commands round-trip a workspace found by -C", async (t) => {
  await withTempDir(async (dir) => {
    const source = join(dir, "source");
    const data = join(source, ".chronicle");
    await Deno.mkdir(data, { recursive: true });
    const cas = await Cas.open(join(data, "cas"));
    const store = Store.open(join(data, "chronicle.db"));
    for (const text of ["v1", "v2"]) {
      const stored = await cas.putBytes(new TextEncoder().encode(text));
      store.record([{
        path: "doc.txt",
        hash: stored.hash,
        size: stored.size,
        mode: S_IFREG | 0o600,
        deleted: false,
      }]);
    }
    store.close();

    await t.step("the default output lies in the data folder", async () => {
      strictEqual(await checkpointCommand(["-C", source]), 0);
      const made = [...Deno.readDirSync(join(data, "checkpoints"))].map((entry) => entry.name);
      strictEqual(made.length, 1);
      ok(/^checkpoint-\d{8}T\d{6}Z$/.test(made[0]!), made[0]);
    });

    const output = join(dir, "ckpt");
    await t.step("--output and --with-objects", async () => {
      strictEqual(
        await checkpointCommand(["-C", source, "--output", output, "--with-objects", "--json"]),
        0,
      );
      ok((await Deno.stat(join(output, "objects"))).isDirectory);
    });

    const target = join(dir, "target");
    await t.step("rehydrate -C writes the tree and records the new root", async () => {
      strictEqual(await rehydrateCommand(["--from", output, "-C", target]), 0);
      strictEqual(await Deno.readTextFile(join(target, "doc.txt")), "v2");
      strictEqual((await Deno.stat(join(target, "doc.txt"))).mode! & 0o777, 0o600);
      const restored = Store.open(join(target, ".chronicle", "chronicle.db"));
      try {
        strictEqual(restored.getMeta(WORKSPACE_ROOT_META), target);
        strictEqual(restored.history("doc.txt").length, 2);
      } finally {
        restored.close();
      }
    });

    await t.step("a second rehydrate needs --force", async () => {
      await rejects(rehydrateCommand(["--from", output, "-C", target]), CliError);
      strictEqual(await rehydrateCommand(["--from", output, "-C", target, "--force", "--json"]), 0);
    });

    await t.step("bad usage", async () => {
      await rejects(rehydrateCommand(["-C", target]), UsageError);
      await rejects(checkpointCommand(["-C", source, "extra"]), UsageError);
      await rejects(checkpointCommand(["-C", source, "--bogus"]), UsageError);
      await rejects(
        checkpointCommand(["-C", join(dir, "nowhere")]),
        (error: unknown) =>
          error instanceof CliError && error.message.startsWith("No Chronicle database at"),
      );
    });
  }, "chronicle-checkpoint-cli-");
});
