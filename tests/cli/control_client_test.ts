import assert from "node:assert/strict";
import { controlRequest } from "../../lib/cli/control_client.ts";
import { resolveLayout } from "../../lib/workspace/mod.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

Deno.test("controlRequest() answers undefined with nothing running, and carries bodiless answers", () =>
  withTempDir(async (root) => {
    const layout = resolveLayout({ root });
    await Deno.mkdir(layout.dataDir);
    assert.equal(await controlRequest(layout, "/ready"), undefined, "no socket");
    const server = Deno.serve(
      { path: layout.controlSocket, onListen: () => {} },
      (request) =>
        new URL(request.url).pathname === "/empty"
          ? new Response(null, { status: 204 })
          : Response.json({ ok: true }),
    );
    try {
      const empty = await controlRequest(layout, "/empty");
      assert.equal(empty?.status, 204);
      assert.equal(await empty?.text(), "");
      assert.deepEqual(await (await controlRequest(layout, "/status"))?.json(), { ok: true });
    } finally {
      await server.shutdown();
    }
    assert.equal(await controlRequest(layout, "/ready"), undefined, "a socket nobody serves");
  }));
