import type { Routes } from "../../lib/net/mod.ts";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";
import { createApp, filesRoutes } from "../../lib/http/mod.ts";
import { DEFAULT_SNAPSHOT_CONFIG, openWorkspaceSnapshots } from "../../lib/snapshot/mod.ts";
import type { NewIteration } from "../../lib/store/mod.ts";
import { MAX_DIFF_BYTES } from "../../lib/history/mod.ts";
import { markBursts, type MasterVersion, uiApiRoutes } from "../../lib/ui/mod.ts";
import { Workspace } from "../../lib/workspace/mod.ts";

interface Fixture {
  root: string;
  workspace: Workspace;
  app: Routes;
}

async function withUi(
  fn: (fixture: Fixture) => Promise<void>,
  masterVersion?: (path: string) => MasterVersion | null,
) {
  await withTempDir(async (root) => {
    const workspace = await Workspace.open({ root });
    try {
      const snapshots = openWorkspaceSnapshots(workspace, {
        config: DEFAULT_SNAPSHOT_CONFIG,
        offTheRecord: false,
      });
      // As the daemon serves it: beside the REST routes it uses (content, diffs, events).
      const routes = [
        filesRoutes(workspace),
        uiApiRoutes({ workspace, snapshots, ...(masterVersion ? { masterVersion } : {}) }),
      ];
      const app = createApp({ token: "t", trustedCaller: false, routes });
      await fn({ root, workspace, app });
    } finally {
      await workspace.close();
    }
  });
}

async function json(app: Routes, path: string, init: RequestInit = {}) {
  const response = await app.request(path, init);
  return { status: response.status, body: await response.json() };
}

/** `n` iterations with made-up content (the timeline and tree never read it). */
function fakeIterations(n: number): NewIteration[] {
  return Array.from({ length: n }, (_, i) => ({
    path: `d${i % 50}/f${i}.txt`,
    hash: i.toString(16).padStart(64, "0"),
    size: i,
    mode: 0o100644,
    deleted: false,
    origin: i % 700 < 350 ? "local" : "sandbox-1",
    // Pauses of a minute every 100 iterations make bursts.
    timestamp: 1_000_000 + i * 100 + Math.floor(i / 100) * 60_000,
  }));
}

Deno.test("timeline: newest-first pages cover every iteration once, bursts do not depend on the cut", async () => {
  await withUi(async ({ workspace, app }) => {
    workspace.store.record(fakeIterations(2_500));
    const seen: Array<
      { sequence: number; timestamp: number; origin: string; burst_start: boolean }
    > = [];
    let before: number | null = null;
    for (let pages = 0; pages < 20; pages++) {
      const query: string = before === null ? "" : `&before=${before}`;
      const page = await json(app, `/ui/api/timeline?limit=333${query}`);
      assertEquals(page.status, 200);
      seen.push(...page.body.items);
      before = page.body.next_before;
      if (before === null) break;
    }
    assertEquals(seen.length, 2_500);
    assertEquals(
      seen.map((item) => item.sequence),
      Array.from({ length: 2_500 }, (_, i) => 2_500 - i),
    );
    assertEquals(seen.map((item) => item.burst_start), markBursts(seen, undefined));
    assert(seen.filter((item) => item.burst_start).length > 20, "pauses and origins make bursts");
  });
});

Deno.test("timeline: filters by origin, path prefix and time range; bad parameters are 400", async () => {
  await withUi(async ({ workspace, app }) => {
    workspace.store.record(fakeIterations(1_400));
    const byOrigin = await json(app, "/ui/api/timeline?origin=sandbox-1&limit=1000");
    assertEquals(byOrigin.body.items.length, 700);
    assert(byOrigin.body.items.every((i: { origin: string }) => i.origin === "sandbox-1"));
    const byPrefix = await json(app, "/ui/api/timeline?prefix=d7/&limit=1000");
    assertEquals(byPrefix.body.items.length, 28);
    const from = 1_000_000 + 100 * 100 + 60_000;
    const to = from + 99 * 100;
    const byTime = await json(app, `/ui/api/timeline?from=${from}&to=${to}&limit=1000`);
    assertEquals(byTime.body.items.map((i: { sequence: number }) => i.sequence).at(-1), 101);
    assertEquals(byTime.body.items.length, 100);
    assertEquals((await json(app, "/ui/api/timeline?limit=0")).status, 400);
    assertEquals((await json(app, "/ui/api/timeline?before=-1")).status, 400);
    const origins = await json(app, "/ui/api/origins");
    assertEquals(origins.body.origins, ["local", "sandbox-1"]);
  });
});

Deno.test("tree and search: a folder's children a page at a time, folders first", async () => {
  await withUi(async ({ workspace, app }) => {
    workspace.store.record([
      ...fakeIterations(1_000),
      { path: "top.txt", hash: "f".repeat(64), size: 1, mode: 0o100644, deleted: false },
    ]);
    // Walk the root 7 entries a page: 50 folders, then top.txt, in path order.
    const names: string[] = [];
    let cursor = "";
    for (let pages = 0; pages < 20; pages++) {
      const page = await json(app, `/ui/api/tree?limit=7&cursor=${encodeURIComponent(cursor)}`);
      assertEquals(page.status, 200);
      names.push(
        ...page.body.entries.map((e: { name: string; type: string }) => `${e.type}:${e.name}`),
      );
      if (page.body.next === null) break;
      cursor = page.body.next;
    }
    const folders = Array.from({ length: 50 }, (_, i) => `dir:d${i}`).sort();
    assertEquals(names, [...folders, "file:top.txt"]);
    const folder = await json(app, "/ui/api/tree?dir=d3&limit=5");
    assertEquals(folder.body.entries.map((e: { path: string }) => e.path), [
      "d3/f103.txt",
      "d3/f153.txt",
      "d3/f203.txt",
      "d3/f253.txt",
      "d3/f3.txt",
    ]);
    assertEquals(folder.body.entries[0].iteration, 1);
    assertEquals((await json(app, "/ui/api/tree?dir=d3&cursor=f:d4/x")).status, 400);
    const found = await json(app, "/ui/api/search?q=F99&limit=3");
    assertEquals(found.body.paths, ["d40/f990.txt", "d41/f991.txt", "d42/f992.txt"]);
    const exact = await json(app, "/ui/api/search?q=F99.TXT");
    assertEquals(exact.body.paths, ["d49/f99.txt"]);
    assertEquals((await json(app, "/ui/api/tree?dir=../etc")).status, 400);
  });
});

Deno.test("file, history and diff: content at an iteration and the diff between two", async () => {
  await withUi(async ({ workspace, app }) => {
    const text = (s: string) => new TextEncoder().encode(s);
    await workspace.writeBytes("notes.md", text("a\nb\nc\n"));
    await workspace.writeBytes("notes.md", text("a\nB\nc\n"));
    await workspace.writeBytes("blob.bin", new Uint8Array([0, 1, 2]));
    const history = await json(app, "/ui/api/history?path=notes.md&limit=1");
    assertEquals(history.body.items.map((i: { iteration: number }) => i.iteration), [2]);
    const older = await json(
      app,
      `/ui/api/history?path=notes.md&before=${history.body.next_before}`,
    );
    assertEquals(older.body.items.map((i: { iteration: number }) => i.iteration), [1]);
    assertEquals(older.body.next_before, null);
    const first = await json(app, "/ui/api/file?path=notes.md&at=1");
    assertEquals([first.body.kind, first.body.text], ["text", "a\nb\nc\n"]);
    const blob = await json(app, "/ui/api/file?path=blob.bin");
    assertEquals(blob.body.kind, "binary");
    assertEquals(blob.body.iteration.size, 3);
    // The UI's diff is REST's (lib/history's diffIterations): the shape files.js reads.
    const diff = await json(app, "/files/notes.md/diff?from=1&to=2&format=json");
    assertEquals([diff.body.added, diff.body.removed], [1, 1]);
    assert(diff.body.text.includes("-b\n+B"), diff.body.text);
    assertEquals([diff.body.hunks[0].old_start, diff.body.hunks[0].new_start], [1, 1]);
    assertEquals(diff.body.hunks[0].lines.map((l: { kind: string }) => l.kind), [
      " ",
      "-",
      "+",
      " ",
    ]);
    assertEquals((await json(app, "/ui/api/diff?path=notes.md&from=1&to=2")).status, 404);
    assertEquals((await json(app, "/ui/api/file?path=nope")).status, 404);
    assertEquals((await json(app, "/ui/api/history?path=.chronicle/chronicle.db")).status, 400);
  });
});

Deno.test("restore: the plan, then applying it needs the token", async () => {
  await withUi(async ({ root, workspace, app }) => {
    await workspace.writeBytes("a.txt", new TextEncoder().encode("one"));
    await workspace.writeBytes("b.txt", new TextEncoder().encode("two"));
    const plan = await json(app, "/ui/api/restore-plan?to=1");
    assertEquals(
      plan.body.changes.map((c: { path: string; action: string }) => [c.path, c.action]),
      [
        ["b.txt", "remove"],
      ],
    );
    const body = JSON.stringify({ sequence: 1 });
    const refused = await json(app, "/ui/api/restore", { method: "POST", body });
    assertEquals(refused.status, 401);
    await Deno.stat(`${root}/b.txt`);
    const done = await json(app, "/ui/api/restore", {
      method: "POST",
      body,
      headers: { authorization: "Bearer t" },
    });
    assertEquals(done.status, 200);
    assertEquals(done.body.applied, ["b.txt"]);
    assertEquals(await Deno.stat(`${root}/b.txt`).then(() => true, () => false), false);
    assertEquals((await json(app, "/ui/api/restore-plan?to=99")).status, 400);
    assertEquals((await json(app, "/ui/api/restore-plan?to=yesterday-ish")).status, 400);
  });
});

Deno.test("errors: a refused path is 400 bad_path with the same body as REST's", async (t) => {
  await withUi(async ({ workspace, app }) => {
    const rest = createApp({ token: "t", trustedCaller: false, routes: [filesRoutes(workspace)] });
    const expected = await json(rest, "/files/.chronicle/chronicle.db");
    assertEquals(expected.status, 400);
    assertEquals(expected.body.error.code, "bad_path");
    const cases = [
      { description: "history", input: "/ui/api/history?path=.chronicle/chronicle.db" },
      { description: "file", input: "/ui/api/file?path=.chronicle/chronicle.db" },
      {
        description: "kept-diff",
        input: `/ui/api/kept-diff?path=.chronicle/chronicle.db&hash=${"0".repeat(64)}`,
      },
      { description: "tree", input: "/ui/api/tree?dir=.chronicle/chronicle.db" },
    ];
    for (const { description, input } of cases) {
      await t.step(description, async () => {
        assertEquals(await json(app, input), expected);
      });
    }
  });
});

Deno.test("restore: old content missing is 409 content_missing, as REST answers, and changes nothing", async () => {
  await withUi(async ({ workspace, app }) => {
    const missing = "ee".repeat(32);
    workspace.store.record([{
      path: "f.txt",
      hash: missing,
      size: 1,
      mode: 0o100644,
      deleted: false,
    }]);
    workspace.store.record([{ path: "f.txt", hash: "", size: 0, mode: 0, deleted: true }]);
    const answer = await json(app, "/ui/api/restore", {
      method: "POST",
      body: JSON.stringify({ sequence: 1 }),
      headers: { authorization: "Bearer t" },
    });
    assertEquals([answer.status, answer.body.error.code], [409, "content_missing"]);
    assert(answer.body.error.message.includes(missing), answer.body.error.message);
    assertEquals(workspace.store.latest("f.txt")?.deleted, true);
  });
});

Deno.test("kept-diff: the kept content against the master's version, not the file as it is now", async () => {
  const text = (s: string) => new TextEncoder().encode(s);
  let master: MasterVersion | null = null;
  await withUi(async ({ workspace, app }) => {
    // A local-sync conflict: the person's edit stays on disk, the master's version is held.
    const theirs = await workspace.cas.putBytes(text("one\nmaster's two\nthree\n"));
    await workspace.writeBytes("notes.md", text("one\nmy two\nthree\n"));
    const kept = workspace.store.latest("notes.md")!.hash;
    master = { sequence: 41, hash: theirs.hash, deleted: false };
    const diff = await json(app, `/ui/api/kept-diff?path=notes.md&hash=${kept}`);
    assertEquals(diff.status, 200);
    assertEquals(diff.body.master.sequence, 41);
    assertEquals([diff.body.identical, diff.body.added, diff.body.removed], [false, 1, 1]);
    assert(diff.body.text.includes("-master's two\n+my two"), diff.body.text);
    assertEquals([diff.body.hunks[0].old_start, diff.body.notes], [1, []]);

    master = { sequence: 42, hash: "", deleted: true };
    const deleted = await json(app, `/ui/api/kept-diff?path=notes.md&hash=${kept}`);
    assertEquals(deleted.body.added, 3);
    assert(deleted.body.notes[0].includes("is a deletion"), deleted.body.notes);

    master = null;
    const unknown = await json(app, `/ui/api/kept-diff?path=notes.md&hash=${kept}`);
    assertEquals([unknown.status, unknown.body.master, unknown.body.added], [200, null, 3]);
    assert(unknown.body.notes[0].startsWith('No master version of "notes.md"'), unknown.body);
  }, () => master);
});

Deno.test("kept-diff: a master's version too large to diff is 413 too_large, not a diff against nothing", async () => {
  let master: MasterVersion | null = null;
  await withUi(async ({ workspace, app }) => {
    const big = await workspace.cas.putBytes(new Uint8Array(MAX_DIFF_BYTES + 1).fill(0x61));
    const kept = await workspace.cas.putBytes(new TextEncoder().encode("kept\n"));
    master = { sequence: 3, hash: big.hash, deleted: false };
    const answer = await json(app, `/ui/api/kept-diff?path=big.txt&hash=${kept.hash}`);
    assertEquals([answer.status, answer.body.error.code], [413, "too_large"]);
    assert(answer.body.error.message.includes("big.txt"), answer.body.error.message);
  }, () => master);
});
