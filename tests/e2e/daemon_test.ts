import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { Cas, sha256Hex } from "../../lib/cas/mod.ts";
import { Store } from "../../lib/store/mod.ts";
import { freePort, runChronicle, spawnChronicle } from "../_helpers/processes.ts";
import { put, putAtomic, withTempDir } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";

const TOKEN = "test-token-123";

async function startDaemon(root: string) {
  const port = freePort();
  const child = spawnChronicle([root, "--http", `127.0.0.1:${port}`, "--token", TOKEN]);
  const base = `http://127.0.0.1:${port}`;
  await waitFor("daemon ready", async () => {
    const response = await fetch(`${base}/ready`).catch(() => undefined);
    await response?.body?.cancel();
    return response?.status === 200;
  }, { timeoutMs: 30_000 });
  return { child, base };
}

async function json(response: Response): Promise<unknown> {
  return await response.json();
}

Deno.test("daemon serves history, iterations and changes over REST, with REST errors", () =>
  withTempDir(async (root) => {
    await put(root, "src/app.ts", "v1");
    const { child, base } = await startDaemon(root);
    try {
      // In one step: the empty file of a truncate, captured alone, would be iteration 2.
      await putAtomic(root, "src/app.ts", "v2");
      await waitFor(
        "v2 recorded",
        async () =>
          ((await json(await fetch(`${base}/files/src/app.ts/history`))) as unknown[]).length === 2,
      );
      const put3 = await fetch(`${base}/files/src/app.ts`, {
        method: "PUT",
        body: "v3",
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      assert.equal(put3.status, 201);
      await put3.body?.cancel();
      const history = await json(await fetch(`${base}/files/src%2Fapp.ts/history`)) as Array<
        { iteration: number; origin: string }
      >;
      assert.deepEqual(history.map((h) => h.iteration), [1, 2, 3]);
      const at1 = await fetch(`${base}/files/src/app.ts/at/1`);
      assert.equal(await at1.text(), "v1");
      const latest = await fetch(`${base}/files/src/app.ts`);
      assert.equal(latest.headers.get("x-chronicle-iteration"), "3");
      assert.equal(await latest.text(), "v3");
      const listing = await json(await fetch(`${base}/files?path=src`)) as {
        entries: Array<{ path: string }>;
      };
      assert.deepEqual(listing.entries.map((e) => e.path), ["src/app.ts"]);
      const changes = await json(await fetch(`${base}/changes?since=1`)) as { changes: unknown[] };
      assert.equal(changes.changes.length, 3); // after src (sequence 1): src/app.ts three times

      const noToken = await fetch(`${base}/files/x.txt`, { method: "PUT", body: "x" });
      assert.equal(noToken.status, 401);
      await noToken.body?.cancel();
      const wrongToken = await fetch(`${base}/files/x.txt`, {
        method: "DELETE",
        headers: { authorization: "Bearer nope" },
      });
      assert.equal(wrongToken.status, 401);
      await wrongToken.body?.cancel();
      const deleted = await fetch(`${base}/files/src/app.ts`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      assert.equal(deleted.status, 200);
      await deleted.body?.cancel();

      const cases: Array<[string, number]> = [
        ["/files/src/app.ts/at/4", 410],
        ["/files/src/app.ts/at/99", 404],
        ["/files/nope.txt", 404],
        ["/files/..%2F..%2Fetc%2Fpasswd", 400],
        ["/files/%2Fetc%2Fpasswd", 400],
        ["/files/a%00b", 400],
        ["/files/.chronicle%2Fchronicle.db", 400],
        ["/files/src/app.ts/at/zero", 400],
        ["/changes?since=-1", 400],
      ];
      for (const [path, status] of cases) {
        const response = await fetch(base + path);
        const body = await json(response) as { error: { code: string; message: string } };
        assert.equal(response.status, status, path);
        assert.ok(body.error.message.length > 0, path);
      }
    } finally {
      assert.equal(await child.stop(), 0, child.output());
    }
  }));

Deno.test("daemon restart records what changed while it was down", () =>
  withTempDir(async (root) => {
    await put(root, "keep.txt", "same");
    await put(root, "edit.txt", "before");
    await put(root, "gone.txt", "bye");
    let daemon = await startDaemon(root);
    assert.equal(await daemon.child.stop(), 0);
    await put(root, "edit.txt", "after");
    await Deno.remove(`${root}/gone.txt`);
    daemon = await startDaemon(root);
    try {
      const log = await runChronicle(["log", "--json", "-C", root]);
      assert.equal(log.code, 0, log.stderr);
      const changes = JSON.parse(log.stdout) as Array<
        { path: string; iteration: number; deleted: boolean }
      >;
      assert.deepEqual(
        changes.map((c) => `${c.path}#${c.iteration}${c.deleted ? "-" : ""}`).sort(),
        ["edit.txt#1", "edit.txt#2", "gone.txt#1", "gone.txt#2-", "keep.txt#1"],
      );
    } finally {
      await daemon.child.stop();
    }
  }));

Deno.test("kill -9 during a burst of writes loses no committed iteration and leaves no half object", () =>
  withTempDir(async (root) => {
    const daemon = await startDaemon(root);
    const writes: Promise<unknown>[] = [];
    for (let n = 0; n < 200; n++) {
      await put(root, `burst/f${n % 50}.txt`, `content ${n} `.repeat(500));
    }
    const database = `${root}/.chronicle/chronicle.db`;
    await waitFor("some iterations committed", () => {
      const store = Store.open(database);
      try {
        return store.sequence() > 20;
      } finally {
        store.close();
      }
    });
    const observed = Store.open(database);
    const committedBefore = observed.sequence();
    observed.close();
    await daemon.child.stop("SIGKILL");
    await Promise.all(writes);
    const store = Store.open(database);
    try {
      assert.ok(store.sequence() >= committedBefore, "no committed iteration lost");
      const cas = await Cas.open(`${root}/.chronicle/cas`, { db: store.db });
      for (const iteration of store.changesSince(0)) {
        if (iteration.deleted) continue;
        const bytes = await cas.readBytes(iteration.hash);
        assert.equal(sha256Hex(bytes), iteration.hash, `object for ${iteration.path} is whole`);
      }
    } finally {
      store.close();
    }
    // A restart picks up everything the killed daemon had not recorded yet.
    const again = await startDaemon(root);
    try {
      const ls = await runChronicle(["ls", "burst", "--json", "-C", root]);
      const entries = JSON.parse(ls.stdout) as Array<{ path: string; hash: string }>;
      assert.equal(entries.length, 50 + 1, "the 50 files and their folder burst");
    } finally {
      await again.child.stop();
    }
  }));

Deno.test("CLI history commands: output, exit 1 with one line, exit 2 on bad usage", () =>
  withTempDir(async (root) => {
    await put(root, "a.txt", "one");
    const daemon = await startDaemon(root);
    await putAtomic(root, "a.txt", "two"); // one step: one iteration (the history counts them)
    try {
      await waitFor(
        "edit recorded",
        async () =>
          (await runChronicle(["history", "a.txt", "--json", "-C", root])).stdout.includes(
            '"iteration":2',
          ),
      );
      const cat = await runChronicle(["cat", "a.txt", "--at", "1", "-C", root]);
      assert.equal(cat.stdout, "one");
      const restore = await runChronicle(["restore", "a.txt", "--at", "1"], { cwd: root });
      assert.equal(restore.code, 0, restore.stderr);
      assert.equal(await Deno.readTextFile(`${root}/a.txt`), "one");
      const history = JSON.parse(
        (await runChronicle(["history", "a.txt", "--json", "-C", root])).stdout,
      ) as unknown[];
      assert.equal(history.length, 3, "restore is a new iteration, recorded once");
      const status = await runChronicle(["status", "--json", "-C", root]);
      assert.equal(JSON.parse(status.stdout).running, true);

      const failures: Array<[string[], number]> = [
        [["cat", "nope.txt", "-C", root], 1],
        [["cat", "a.txt", "--at", "9", "-C", root], 1],
        [["history", "../etc/passwd", "-C", root], 1],
        [["cat", "a.txt", "--bogus", "-C", root], 2],
        [["cat", "a.txt", "--at", "x", "-C", root], 2],
      ];
      for (const [args, code] of failures) {
        const result = await runChronicle(args);
        assert.equal(result.code, code, `${args.join(" ")}: ${result.stderr}`);
        if (code === 1) assert.equal(result.stderr.trim().split("\n").length, 1, result.stderr);
      }
      const elsewhere = await Deno.makeTempDir();
      try {
        const none = await runChronicle(["ls"], { cwd: elsewhere });
        assert.equal(none.code, 1);
        assert.match(none.stderr, /No Chronicle workspace/);
      } finally {
        await Deno.remove(elsewhere);
      }
    } finally {
      await daemon.child.stop();
    }
  }));

Deno.test("corrupt content is reported, never served; an unreadable database is one line", () =>
  withTempDir(async (root) => {
    await put(root, "a.txt", "precious content");
    const daemon = await startDaemon(root);
    try {
      const history = await (await fetch(`${daemon.base}/files/a.txt/history`)).json() as Array<
        { hash: string }
      >;
      const hash = history[0]!.hash;
      // Small content lives in the database's object table (see CasOptions.db).
      const db = new DatabaseSync(`${root}/.chronicle/chronicle.db`);
      try {
        const tampered = db.prepare("UPDATE cas_objects SET bytes = ? WHERE hash = ?")
          .run(new TextEncoder().encode("tampered"), hash);
        assert.equal(tampered.changes, 1);
      } finally {
        db.close();
      }
      const response = await fetch(`${daemon.base}/files/a.txt`);
      const body = await response.json() as { error: { code: string } };
      assert.equal(response.status, 500);
      assert.equal(body.error.code, "corrupt_content");
      // The store's copy is gone as corrupt: cat gives the latest version from the file on
      // disk, which still hashes to it; never the corrupt bytes.
      const cat = await runChronicle(["cat", "a.txt", "-C", root]);
      assert.equal(cat.code, 0, cat.stderr);
      assert.equal(cat.stdout, "precious content", "no corrupt byte printed");
    } finally {
      await daemon.child.stop();
    }
    await Deno.writeTextFile(`${root}/.chronicle/chronicle.db`, "garbage ".repeat(1000));
    await Deno.remove(`${root}/.chronicle/chronicle.db-wal`).catch(() => undefined);
    await Deno.remove(`${root}/.chronicle/chronicle.db-shm`).catch(() => undefined);
    const ls = await runChronicle(["ls", "-C", root]);
    assert.equal(ls.code, 1);
    assert.equal(ls.stderr.trim().split("\n").length, 1, ls.stderr);
    assert.match(ls.stderr, /^error: Cannot open database/);
  }));
