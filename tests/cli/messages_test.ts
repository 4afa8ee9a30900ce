import { ok, strictEqual } from "node:assert/strict";
import { runChronicle } from "../_helpers/processes.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

Deno.test("a listener whose address is taken names its option", async (t) => {
  // Held open by this test for the whole run: the address is certainly in use.
  using taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const address = `127.0.0.1:${(taken.addr as Deno.NetAddr).port}`;
  for (const flag of ["--http", "--ws-listen"]) {
    await t.step(flag, async () => {
      await withTempDir(async (root) => {
        const run = await runChronicle([root, flag, address]);
        strictEqual(run.code, 1, run.stderr);
        const last = run.stderr.trim().split("\n").at(-1)!;
        strictEqual(
          last,
          `error: Cannot listen on ${flag} ${address}: another process listens there; stop it or choose another port`,
        );
        ok(!run.stderr.includes("os error 98"), run.stderr);
      }, "chronicle-listen-");
    });
  }
});
