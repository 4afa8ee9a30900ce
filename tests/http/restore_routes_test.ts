/**
 * `POST /restore` on the real REST app over a real workspace, store and CAS.
 */
import assert from "node:assert/strict";
import { createApp, filesRoutes, MAX_RESTORE_PATHS, restoreRoutes } from "../../lib/http/mod.ts";
import { DEFAULT_SNAPSHOT_CONFIG, openWorkspaceSnapshots } from "../../lib/snapshot/mod.ts";
import { Workspace } from "../../lib/workspace/mod.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

const text = (s: string) => new TextEncoder().encode(s);

async function withRestore(
  work: (workspace: Workspace, post: (body: unknown) => Promise<Response>) => Promise<void>,
): Promise<void> {
  await withTempDir(async (root) => {
    const workspace = await Workspace.open({ root });
    try {
      await workspace.writeBytes("notes.md", text("v1"));
      await workspace.writeBytes("notes.md", text("v2"));
      await workspace.remove("notes.md");
      await workspace.writeBytes("other.txt", text("o1"));
      const snapshots = openWorkspaceSnapshots(workspace, {
        config: DEFAULT_SNAPSHOT_CONFIG,
        offTheRecord: false,
      });
      const app = createApp({
        token: "secret",
        trustedCaller: false,
        routes: [filesRoutes(workspace), restoreRoutes(workspace, snapshots)],
      });
      await work(workspace, (body) =>
        Promise.resolve(app.request("/restore", {
          method: "POST",
          headers: { authorization: "Bearer secret" },
          body: typeof body === "string" ? body : JSON.stringify(body),
        })));
    } finally {
      await workspace.close();
    }
  });
}

Deno.test("POST /restore {path, at} brings an iteration back as a new one, origin restore", () =>
  withRestore(async (workspace, post) => {
    const response = await post({ path: "notes.md", at: 1 });
    assert.equal(response.status, 201);
    const entry = await response.json();
    assert.deepEqual([entry.iteration, entry.origin, entry.deleted], [4, "restore", false]);
    assert.equal(await Deno.readTextFile(`${workspace.root}/notes.md`), "v1");
    const again = await post({ path: "notes.md", at: 1 });
    assert.equal(again.status, 200, "nothing new: already there");
    assert.equal((await again.json()).iteration, 4);
  }));

Deno.test("POST /restore {to} restores the workspace to a sequence, origin restore, after a snapshot", () =>
  withRestore(async (workspace, post) => {
    const response = await post({ to: 1 });
    assert.equal(response.status, 200);
    const body = await response.json();
    assert.equal(body.sequence, 1);
    assert.deepEqual(body.applied.sort(), ["notes.md", "other.txt"]);
    assert.ok(body.snapshot?.id, "a snapshot of what was there");
    assert.equal(workspace.store.latest("notes.md")?.origin, "restore");
    assert.equal(workspace.store.latest("other.txt")?.deleted, true);
    assert.equal(workspace.store.latest("other.txt")?.origin, "restore");
  }));

Deno.test("POST /restore refuses what it cannot do", async (t) => {
  const cases = [
    { description: "not JSON", body: "{", status: 400, code: "bad_request" },
    { description: "not an object", body: [1], status: 400, code: "bad_request" },
    { description: "no path", body: { at: 1 }, status: 400, code: "bad_parameter" },
    { description: "no at", body: { path: "notes.md" }, status: 400, code: "bad_parameter" },
    { description: "at 0", body: { path: "notes.md", at: 0 }, status: 400, code: "bad_parameter" },
    { description: "a path out", body: { path: "../x", at: 1 }, status: 400, code: "bad_path" },
    {
      description: "unknown iteration",
      body: { path: "notes.md", at: 9 },
      status: 404,
      code: "not_found",
    },
    { description: "a deletion", body: { path: "notes.md", at: 3 }, status: 410, code: "deleted" },
    {
      description: "a body over 4 MiB",
      body: JSON.stringify({ path: "notes.md", at: 1, pad: "x".repeat(4 * 1024 * 1024) }),
      status: 413,
      code: "too_large",
    },
    {
      description: "a path out of a restore to",
      body: { to: 1, paths: ["../x"] },
      status: 400,
      code: "bad_path",
    },
    { description: "a bad to", body: { to: "whenever" }, status: 400, code: "bad_parameter" },
    { description: "to of a wrong type", body: { to: true }, status: 400, code: "bad_parameter" },
    {
      description: "paths not strings",
      body: { to: 1, paths: [1] },
      status: 400,
      code: "bad_parameter",
    },
    {
      description: "too many paths",
      body: { to: 1, paths: Array.from({ length: MAX_RESTORE_PATHS + 1 }, (_, i) => `f${i}`) },
      status: 400,
      code: "bad_parameter",
    },
  ];
  await withRestore(async (_workspace, post) => {
    for (const { description, body, status, code } of cases) {
      await t.step(description, async () => {
        const response = await post(body);
        const answer = await response.json();
        assert.equal(response.status, status, JSON.stringify(answer));
        assert.equal(answer.error.code, code);
      });
    }
  });
});

Deno.test("POST /restore {to} is 409 content_missing when old content is gone, and changes nothing", () =>
  withRestore(async (workspace, post) => {
    const missing = "ee".repeat(32);
    const before = workspace.store.sequence();
    workspace.store.record([
      { path: "gone.txt", hash: missing, size: 1, mode: 0o100644, deleted: false },
    ]);
    workspace.store.record([{ path: "gone.txt", hash: "", size: 0, mode: 0, deleted: true }]);
    const response = await post({ to: before + 1, paths: ["gone.txt"] });
    const answer = await response.json();
    assert.equal(response.status, 409, JSON.stringify(answer));
    assert.equal(answer.error.code, "content_missing");
    assert.ok(answer.error.message.includes(missing), answer.error.message);
    assert.equal(workspace.store.latest("gone.txt")?.deleted, true);
  }));
