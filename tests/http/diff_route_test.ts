/**
 * `GET /files/{path}/diff` on the real REST app over a real workspace, store and CAS.
 */
import assert from "node:assert/strict";
import { createApp, filesRoutes } from "../../lib/http/mod.ts";
import { Workspace } from "../../lib/workspace/mod.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

async function withApp(
  work: (request: (url: string) => Promise<Response>) => Promise<void>,
): Promise<void> {
  await withTempDir(async (root) => {
    const workspace = await Workspace.open({ root });
    try {
      const text = (s: string) => new TextEncoder().encode(s);
      await workspace.writeBytes("notes.md", text("a\nb\n"));
      await workspace.writeBytes("notes.md", text("a\nc\n"));
      await workspace.remove("notes.md");
      await workspace.writeBytes("dir/diff", text("a file named diff\n"));
      await workspace.writeBytes("dir/diff", text("changed\n"));
      await workspace.writeBytes("gone.txt", text("x\n"));
      await workspace.remove("gone.txt");
      await workspace.writeBytes("gone.txt", text("y\n"));
      await workspace.remove("gone.txt");
      const app = createApp({
        token: undefined,
        trustedCaller: false,
        routes: [filesRoutes(workspace)],
      });
      await work((url) => Promise.resolve(app.request(url)));
    } finally {
      await workspace.close();
    }
  });
}

Deno.test("GET /files/{path}/diff answers text/x-diff by default", () =>
  withApp(async (request) => {
    const response = await request("/files/notes.md/diff?from=1&to=2");
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type")!, /^text\/x-diff/);
    assert.equal(response.headers.get("x-chronicle-to"), "2");
    assert.equal(
      await response.text(),
      "--- a/notes.md@1\n+++ b/notes.md@2\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n",
    );
    const latest = await request("/files/notes.md/diff?from=2");
    assert.equal(
      await latest.text(),
      "note: iteration 3 is a deletion, shown as empty\n--- a/notes.md@2\n+++ b/notes.md@3\n@@ -1,2 +0,0 @@\n-a\n-c\n",
    );
  }));

Deno.test("GET /files/{path}/diff?format=json answers hunks, added, removed, binary", () =>
  withApp(async (request) => {
    const response = await request("/files/notes.md/diff?from=1&to=2&format=json");
    assert.equal(response.status, 200);
    const body = await response.json();
    assert.equal(body.path, "notes.md");
    assert.deepEqual([body.added, body.removed, body.binary, body.identical], [1, 1, false, false]);
    assert.deepEqual(body.hunks, [{
      old_start: 1,
      old_lines: 2,
      new_start: 1,
      new_lines: 2,
      lines: [{ kind: " ", text: "a" }, { kind: "-", text: "b" }, { kind: "+", text: "c" }],
    }]);
    assert.deepEqual([body.from.iteration, body.to.iteration], [1, 2]);
    assert.equal(body.from.origin, "local");
  }));

Deno.test("GET /files/{path}/diff: a file whose own name is diff is reached with its slash encoded", () =>
  withApp(async (request) => {
    const content = await request("/files/dir%2Fdiff");
    assert.equal(await content.text(), "changed\n");
    const diff = await request("/files/dir%2Fdiff/diff?from=1&format=json");
    assert.equal((await diff.json()).path, "dir/diff");
  }));

Deno.test("GET /files/{path}/diff refuses what it cannot answer", async (t) => {
  const cases = [
    { description: "no from", url: "/files/notes.md/diff", status: 400, code: "bad_parameter" },
    {
      description: "from 0",
      url: "/files/notes.md/diff?from=0",
      status: 400,
      code: "bad_parameter",
    },
    {
      description: "from not a number",
      url: "/files/notes.md/diff?from=x",
      status: 400,
      code: "bad_parameter",
    },
    {
      description: "an unknown format",
      url: "/files/notes.md/diff?from=1&format=html",
      status: 400,
      code: "bad_parameter",
    },
    {
      description: "a path out of the workspace",
      url: "/files/..%2Fetc%2Fpasswd/diff?from=1",
      status: 400,
      code: "bad_path",
    },
    {
      description: "an unknown path",
      url: "/files/nope.md/diff?from=1",
      status: 404,
      code: "not_found",
    },
    {
      description: "an unknown iteration",
      url: "/files/notes.md/diff?from=1&to=9",
      status: 404,
      code: "not_found",
    },
    {
      description: "two deletions",
      url: "/files/gone.txt/diff?from=2&to=4",
      status: 410,
      code: "deleted",
    },
  ];
  await withApp(async (request) => {
    for (const { description, url, status, code } of cases) {
      await t.step(description, async () => {
        const response = await request(url);
        const body = await response.json();
        assert.equal(response.status, status, JSON.stringify(body));
        assert.equal(body.error.code, code);
      });
    }
  });
});
