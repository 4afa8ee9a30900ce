import { assert, assertEquals } from "../_helpers/assert.ts";
import { runChronicle } from "../_helpers/processes.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

Deno.test("chronicle ui: --help, and a plain refusal when no Chronicle runs there", async () => {
  await withTempDir(async (root) => {
    const help = await runChronicle(["ui", "--help"]);
    assertEquals(help.code, 0);
    assert(help.stdout.includes("chronicle ui [--open]"), help.stdout);
    assert(help.stdout.includes("do not share it"), help.stdout);
    await Deno.mkdir(`${root}/.chronicle`);
    const none = await runChronicle(["ui", "-C", root]);
    assertEquals(none.code, 1);
    assert(none.stderr.includes("No Chronicle"), none.stderr);
    const extra = await runChronicle(["ui", "now", "-C", root]);
    assertEquals(extra.code, 2);
  });
});
