import { ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { captured } from "./_captured.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

Deno.test("chronicle health -q prints nothing when not ready or not running, but reports bad arguments", async (t) => {
  await withTempDir(async (data) => {
    await t.step("nothing running: exit 1, silent", async () => {
      const result = await captured(["health", "--ready", "--data-dir", data, "-q"]);
      strictEqual(result.code, 1);
      strictEqual(result.out, "");
      strictEqual(result.err, "");
    });
    const server = Deno.serve(
      { path: join(data, "control.sock"), transport: "unix", onListen() {} },
      (request) =>
        new URL(request.url).pathname === "/ready"
          ? Response.json({ ready: false }, { status: 503 })
          : Response.json({ status: "degraded" }, { status: 500 }),
    );
    try {
      for (const args of [["--ready", "-q"], ["--ready", "--quiet"], ["-q"]]) {
        await t.step(`not ready or not healthy (${args.join(" ")}): exit 1, silent`, async () => {
          const result = await captured(["health", ...args, "--data-dir", data]);
          strictEqual(result.code, 1);
          strictEqual(result.out, "");
          strictEqual(result.err, "");
        });
      }
      await t.step("without -q the reason is still printed", async () => {
        const result = await captured(["health", "--ready", "--data-dir", data]);
        strictEqual(result.code, 1);
        ok(result.err.includes("is not ready: HTTP 503"), result.err);
      });
    } finally {
      await server.shutdown();
    }
    await t.step("bad arguments stay loud with -q: exit 2 and the reason", async () => {
      const result = await captured(["health", "--timeout-ms", "soon", "--data-dir", data, "-q"]);
      strictEqual(result.code, 2);
      ok(result.err.includes('Invalid --timeout-ms "soon"'), result.err);
    });
  }, "chronicle-health-quiet-");
});
