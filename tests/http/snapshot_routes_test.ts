import nodeAssert from "node:assert/strict";
import { join } from "node:path";
import { createApp } from "../../lib/http/mod.ts";
import { snapshotRoutes } from "../../lib/http/snapshot_routes.ts";
import type { Snapshots } from "../../lib/snapshot/mod.ts";
import type { Store } from "../../lib/store/mod.ts";
import type { Routes } from "../../lib/net/mod.ts";
import { withWorkspace } from "../snapshot/_helpers.ts";

interface Fixture {
  root: string;
  app: Routes;
  snapshots: Snapshots;
  store: Store;
}

/** Runs `fn` with the snapshot routes over a fresh workspace (`tests/snapshot`'s). */
function withApp(fn: (fixture: Fixture) => Promise<void>): Promise<void> {
  return withWorkspace(({ root, snapshots, store }) =>
    fn({ root, app: snapshotRoutes({ snapshots }), snapshots, store })
  );
}

async function call(app: Routes, method: string, path: string, body?: unknown) {
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    init.headers = { "content-type": "application/json" };
  }
  const response = await app.request(path, init);
  return { status: response.status, body: await response.json() };
}

Deno.test("POST /snapshots, GET /snapshots, GET /snapshots/{id} and its diff, then rollback", async () => {
  await withApp(async ({ root, app }) => {
    await Deno.writeTextFile(join(root, "a.txt"), "good");
    const created = await call(app, "POST", "/snapshots", {
      type: "write_file",
      payload: { path: "a.txt" },
    });
    nodeAssert.equal(created.status, 201);
    const id = created.body.snapshot.id as string;
    nodeAssert.equal(created.body.snapshot.action_type, "write_file");
    nodeAssert.deepEqual(created.body.snapshot.files.map((f: { path: string }) => f.path), [
      "a.txt",
    ]);
    await Deno.writeTextFile(join(root, "a.txt"), "bad");
    const list = await call(app, "GET", "/snapshots");
    nodeAssert.deepEqual(list.body.map((s: { id: string }) => s.id), [id]);
    const one = await call(app, "GET", `/snapshots/${id.slice(0, 6)}`);
    nodeAssert.equal(one.body.hash, created.body.snapshot.hash);
    const diff = await call(app, "GET", `/snapshots/${id}/diff`);
    nodeAssert.equal(diff.body.changes[0].change_type, "modified");
    nodeAssert.equal(diff.body.changes[0].before_size, 4);
    nodeAssert.equal(diff.body.changes[0].after_size, 3);
    const rolled = await call(app, "POST", `/snapshots/${id}/rollback`);
    nodeAssert.equal(rolled.status, 200);
    nodeAssert.deepEqual(rolled.body.problems, []);
    nodeAssert.equal(rolled.body.snapshot.action_type, "rollback");
    nodeAssert.equal(await Deno.readTextFile(join(root, "a.txt")), "good");
    const verify = await call(app, "GET", "/snapshots/verify");
    nodeAssert.equal(verify.body.ok, true);
    nodeAssert.equal(verify.body.snapshots, 2);
    nodeAssert.equal(verify.body.content_checked, 2);
  });
});

Deno.test("POST /snapshots off the record, or for a read, records nothing", async () => {
  await withApp(async ({ app, snapshots }) => {
    const action = { type: "write_file", payload: { path: "a.txt" } };
    const otr = await call(app, "POST", "/snapshots?otr=1", action);
    nodeAssert.deepEqual([otr.status, otr.body], [200, {
      snapshot: null,
      reason: "off_the_record",
    }]);
    const flagged = await call(app, "POST", "/snapshots", { ...action, off_the_record: true });
    nodeAssert.equal(flagged.body.reason, "off_the_record");
    const read = await call(app, "POST", "/snapshots", {
      type: "read_file",
      payload: { path: "a.txt" },
    });
    nodeAssert.deepEqual(read.body, { snapshot: null, reason: "no_files_changed" });
    nodeAssert.deepEqual(snapshots.list(), []);
  });
});

Deno.test("transactions over REST: begin, snapshot into, roll back, commit refused", async () => {
  await withApp(async ({ root, app }) => {
    const begun = await call(app, "POST", "/transactions");
    nodeAssert.equal(begun.status, 201);
    nodeAssert.equal(begun.body.status, "active");
    const txn = begun.body.id as string;
    for (const name of ["x", "y", "z"]) {
      const snap = await call(app, "POST", "/snapshots", {
        type: "write_file",
        payload: { path: name },
        transaction_id: txn,
      });
      nodeAssert.equal(snap.body.snapshot.transaction_id, txn);
      await Deno.writeTextFile(join(root, name), name);
    }
    nodeAssert.equal((await call(app, "GET", `/transactions/${txn}`)).body.snapshots.length, 3);
    const rolled = await call(app, "POST", `/transactions/${txn.slice(0, 8)}/rollback`);
    nodeAssert.equal(rolled.status, 200);
    nodeAssert.equal(rolled.body.transaction.status, "rolled_back");
    for (const name of ["x", "y", "z"]) {
      await nodeAssert.rejects(() => Deno.stat(join(root, name)), Deno.errors.NotFound);
    }
    const commit = await call(app, "POST", `/transactions/${txn}/commit`);
    nodeAssert.equal(commit.status, 409);
    nodeAssert.equal(commit.body.error.code, "conflict");
    const other = (await call(app, "POST", "/transactions")).body.id;
    const committed = await call(app, "POST", `/transactions/${other}/commit`);
    nodeAssert.equal(committed.body.status, "committed");
    nodeAssert.equal((await call(app, "GET", "/transactions")).body.length, 2);
  });
});

Deno.test("snapshot routes answer bad requests with the JSON error body and fitting status", async () => {
  await withApp(async ({ app, store }) => {
    const cases: Array<[string, string, unknown, number, string, string]> = [
      ["GET", "/snapshots/ffff", undefined, 404, "not_found", 'No snapshot has the ID "ffff"'],
      ["GET", "/snapshots/ab", undefined, 400, "bad_request", "at least 4"],
      ["GET", "/snapshots/ffffffff/diff", undefined, 404, "not_found", "ffffffff"],
      ["POST", "/snapshots/ffffffff/rollback", undefined, 404, "not_found", "ffffffff"],
      ["POST", "/transactions/ffffffff/commit", undefined, 404, "not_found", "No transaction"],
      ["POST", "/snapshots", "{not json", 400, "bad_request", "must be JSON"],
      ["POST", "/snapshots", { payload: {} }, 400, "bad_request", '"type"'],
      ["POST", "/snapshots", { type: "write_file" }, 400, "bad_request", '"path" string'],
      [
        "POST",
        "/snapshots",
        { type: "write_file", payload: { path: "../x" } },
        400,
        "bad_path",
        "outside",
      ],
      [
        "POST",
        "/snapshots",
        { type: "write_file", payload: { path: "a" }, transaction_id: "ffffffff" },
        404,
        "not_found",
        "No transaction",
      ],
      ["GET", "/snapshots?limit=x", undefined, 400, "bad_request", 'Invalid limit "x"'],
    ];
    for (const [method, path, body, status, code, message] of cases) {
      const answer = await call(app, method, path, body);
      nodeAssert.equal(answer.status, status, `${method} ${path}: ${JSON.stringify(answer.body)}`);
      nodeAssert.equal(answer.body.error.code, code, `${method} ${path}`);
      nodeAssert.ok(
        answer.body.error.message.includes(message),
        `${method} ${path}: ${answer.body.error.message}`,
      );
    }
    store.db.exec("DROP TABLE snapshot_chain");
    const broken = await call(app, "GET", "/snapshots/verify");
    nodeAssert.equal(broken.status, 500);
    nodeAssert.equal(broken.body.error.code, "database");
  });
});

Deno.test("mounted in the app, snapshot writes need the token and reads do not", async () => {
  await withApp(async ({ snapshots }) => {
    const app = createApp({
      token: "secret",
      trustedCaller: false,
      routes: [snapshotRoutes({ snapshots })],
    });
    const denied = await app.request("/transactions", { method: "POST" });
    nodeAssert.equal(denied.status, 401);
    await denied.body?.cancel();
    const allowed = await app.request("/transactions", {
      method: "POST",
      headers: { authorization: "Bearer secret" },
    });
    nodeAssert.equal(allowed.status, 201);
    await allowed.body?.cancel();
    const read = await app.request("/snapshots");
    nodeAssert.equal(read.status, 200);
    nodeAssert.deepEqual(await read.json(), []);
    const missing = await app.request("/snapshots/ffffffff");
    nodeAssert.equal(missing.status, 404);
    nodeAssert.equal((await missing.json()).error.code, "not_found");
  });
});
