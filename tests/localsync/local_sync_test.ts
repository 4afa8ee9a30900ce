/**
 * Local-sync end to end (issue 7): an agent's folder served by a master, and a person's
 * folder kept by a local-sync replica, each a real `main.ts` process. The person edits
 * real files the way editors do; every state is reached by polling, never by sleeping.
 */
import assert from "node:assert/strict";
import { errorMessage } from "../../lib/log/mod.ts";
import type { Child } from "../_helpers/processes.ts";
import { runChronicle } from "../_helpers/processes.ts";
import { put, putAtomic, withTempDir } from "../_helpers/temp_dir.ts";
import { sha256OfText } from "../_helpers/text_hash.ts";
import { waitForSameTrees } from "../_helpers/tree_state.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import {
  chronicleJson,
  type ConflictEntry,
  control,
  DEADLINE_MS,
  type HistoryEntry,
  historyOf,
  readText,
  recordedPaths,
  socketOf,
  startLocalSync,
  startMaster,
  stopDetached,
  syncStatus,
  waitForLive,
  waitForQuiet,
  waitForText,
} from "./_local_sync.ts";

/** Stops children, last started first, and returns their collected output. */
async function stopAll(children: Child[]): Promise<string> {
  let output = "";
  for (const child of children.splice(0).reverse()) {
    await child.stop();
    output += child.output();
  }
  return output;
}

/** The `{"error": {code, message}}` of a REST error answer. */
function errorOf(body: unknown): { code: string; message: string } {
  return (body as { error: { code: string; message: string } }).error;
}

/** Fails when a process logged an error. */
function assertNoErrors(logs: string): void {
  const errors = logs.split("\n").filter((line) => / ERROR /.test(line));
  assert.deepEqual(errors, [], logs);
}

/** The iterations of `path` on the agent's side written back by the replica. */
async function writtenBack(agent: string, path: string, sandboxId: string): Promise<number> {
  return (await historyOf(agent, path)).filter((entry) => entry.origin === sandboxId).length;
}

/**
 * Waits until the agent's store records `text` as the latest iteration of `path` (the
 * file lands just before its iteration is recorded), and returns that iteration.
 */
async function recordedOnAgent(agent: string, path: string, text: string): Promise<HistoryEntry> {
  const hash = sha256OfText(text);
  let history: HistoryEntry[] = [];
  try {
    return await waitFor(`the agent to record ${path}`, async () => {
      history = await historyOf(agent, path);
      const last = history.at(-1);
      return last?.hash === hash ? last : undefined;
    }, { timeoutMs: DEADLINE_MS, intervalMs: 50 });
  } catch (error) {
    throw new Error(
      `${errorMessage(error)}: ${JSON.stringify(history)}`,
    );
  }
}

Deno.test("local-sync carries edits both ways, editor saves and bursts, never editor noise", async (t) => {
  await withTempDir(async (base) => {
    const agent = `${base}/agent`;
    const local = `${base}/local`;
    await put(agent, "a.txt", "agent v1\n");
    await put(agent, "docs/readme.md", "# readme\n");
    await Deno.mkdir(local);
    const children: Child[] = [];
    let logs = "";
    try {
      children.push(await startMaster(agent));
      children.push(await startLocalSync(agent, local));
      const { sandboxId, role } = await syncStatus(local);
      assert.equal(role, "local-sync");
      await waitForSameTrees([agent, local], { timeoutMs: DEADLINE_MS });

      await t.step("the agent's edits reach the person's files", async () => {
        await put(agent, "a.txt", "agent v2\n");
        await put(agent, "src/new.ts", "export const x = 1;\n");
        await put(agent, "docs/ünï côde.md", "# ünï\n");
        await Deno.remove(`${agent}/docs/readme.md`);
        await waitForText(`${local}/a.txt`, "agent v2\n");
        await waitForText(`${local}/src/new.ts`, "export const x = 1;\n");
        await waitForText(`${local}/docs/ünï côde.md`, "# ünï\n");
        await waitForText(`${local}/docs/readme.md`, undefined);
      });

      await t.step("the person's edits reach the agent, written by the replica", async () => {
        const edits: [string, string][] = [
          ["notes.txt", "a note from the person\n"],
          ["src/new.ts", "export const x = 2;\n"],
          ["my notes/café.txt", "with spaces and accents\n"],
          ["empty.txt", ""],
        ];
        for (const [path, text] of edits) await put(local, path, text);
        // Binary, and large enough to travel in chunks.
        const big = new Uint8Array(5 * 1024 * 1024 + 7).map((_, i) => (i * 31 + (i >> 12)) & 255);
        await put(local, "assets/big.bin", big);
        await Deno.remove(`${local}/docs/ünï côde.md`);
        for (const [path, text] of edits) {
          await waitForText(`${agent}/${path}`, text);
          const last = await recordedOnAgent(agent, path, text);
          assert.equal(last.origin, sandboxId, `${path} on the agent's side`);
        }
        await waitForText(`${agent}/docs/ünï côde.md`, undefined);
        await waitForSameTrees([agent, local], { timeoutMs: DEADLINE_MS });
        assert.equal((await historyOf(agent, "assets/big.bin")).at(-1)?.origin, sandboxId);
      });

      await t.step(
        "editor saves by rename deliver the content, never the swap or temp file",
        async () => {
          // vim (backupcopy=no): swap file, write probe, original renamed to a backup, new
          // file written, backup removed.
          await Deno.writeTextFile(`${local}/.a.txt.swp`, "vim swap 1");
          await Deno.writeTextFile(`${local}/4913`, "");
          await Deno.remove(`${local}/4913`);
          await Deno.rename(`${local}/a.txt`, `${local}/a.txt~`);
          // The new file in one step: a capture between its creation and the write would
          // send the empty file back as a version of its own, and the versions sent are
          // listed below.
          await putAtomic(local, "a.txt", "saved by vim\n");
          await Deno.remove(`${local}/a.txt~`);
          await Deno.writeTextFile(`${local}/.a.txt.swp`, "vim swap 2");
          await waitForText(`${agent}/a.txt`, "saved by vim\n");
          // An atomic save: the new content is written beside the file, then renamed over it.
          await Deno.writeTextFile(`${local}/a.txt.tmp`, "saved atomically\n");
          await Deno.rename(`${local}/a.txt.tmp`, `${local}/a.txt`);
          await waitForText(`${agent}/a.txt`, "saved atomically\n");
          // The swap file itself renamed over the file.
          await Deno.writeTextFile(`${local}/.a.txt.swp`, "saved from the swap file\n");
          await Deno.rename(`${local}/.a.txt.swp`, `${local}/a.txt`);
          await waitForText(`${agent}/a.txt`, "saved from the swap file\n");
          await recordedOnAgent(agent, "a.txt", "saved from the swap file\n");
          await waitForQuiet(local);
          const sentPaths = await recordedPaths(agent);
          for (const path of [".a.txt.swp", "4913", "a.txt~", "a.txt.tmp"]) {
            assert.ok(!sentPaths.has(path), `${path} reached the agent`);
            assert.equal(await readText(`${agent}/${path}`), undefined, `${path} on the agent`);
          }
          const sent = (await historyOf(agent, "a.txt")).filter((entry) =>
            entry.origin === sandboxId && !entry.deleted
          );
          assert.deepEqual(sent.map((entry) => entry.hash), [
            sha256OfText("saved by vim\n"),
            sha256OfText("saved atomically\n"),
            sha256OfText("saved from the swap file\n"),
          ]);
        },
      );

      await t.step("a burst of rapid saves becomes a few write-backs, never a loop", async () => {
        const started = performance.now();
        for (let save = 1; save <= 30; save++) {
          // As an editor saves: truncate, write, flush to disk.
          const file = await Deno.open(`${local}/burst.txt`, {
            write: true,
            create: true,
            truncate: true,
          });
          await file.write(new TextEncoder().encode(`save ${save}\n`));
          await file.syncData();
          file.close();
        }
        const elapsed = performance.now() - started;
        await waitForText(`${agent}/burst.txt`, "save 30\n");
        // Settled: nothing pending, and the agent's history of the file stable across polls.
        let previous = -1;
        const settled = await waitFor("the burst's write-backs to settle", async () => {
          const status = await syncStatus(local);
          const count = (await historyOf(agent, "burst.txt")).length;
          const stable = status.pendingWriteBacks === 0 && count === previous;
          previous = count;
          return stable ? count : 0;
        }, { timeoutMs: DEADLINE_MS, intervalMs: 400 });
        const sent = await writtenBack(agent, "burst.txt", sandboxId);
        assert.ok(sent >= 1 && sent <= 3, `${sent} write-backs for 30 saves in ${elapsed} ms`);
        assert.equal(settled, sent, "only the replica wrote burst.txt");
        // A later change travels the whole way round; the burst's count has not moved.
        await put(agent, "after-burst.txt", "later\n");
        await waitForText(`${local}/after-burst.txt`, "later\n");
        await waitForQuiet(local);
        assert.equal(await writtenBack(agent, "burst.txt", sandboxId), sent);
        assert.equal(await readText(`${local}/burst.txt`), "save 30\n");
      });

      await t.step("editor noise is never recorded or sent", async () => {
        const noise = [
          "notes.txt.swp",
          ".notes.txt.swo",
          "src/.new.ts.swx",
          "notes.txt~",
          ".#notes.txt",
          "#notes.txt#",
          "4913",
          ".DS_Store",
          "src/.DS_Store",
          "src/build.tmp",
          ".git/HEAD",
        ];
        for (const path of noise) await put(local, path, `noise in ${path}\n`);
        await put(local, "src/real.ts", "export const real = true;\n");
        await recordedOnAgent(agent, "src/real.ts", "export const real = true;\n");
        await waitForQuiet(local);
        const [sent, recorded] = await Promise.all([recordedPaths(agent), recordedPaths(local)]);
        assert.ok(recorded.has("src/real.ts") && sent.has("src/real.ts"));
        for (const path of noise) {
          assert.ok(!sent.has(path), `${path} reached the agent`);
          assert.ok(!recorded.has(path), `${path} was recorded locally`);
          assert.equal(await readText(`${agent}/${path}`), undefined, `${path} on the agent`);
          assert.equal(await readText(`${local}/${path}`), `noise in ${path}\n`, path);
        }
        await waitForSameTrees([agent, local], { timeoutMs: DEADLINE_MS, exclude: noise });
        assert.deepEqual((await waitForQuiet(local)).problems, []);
      });
    } finally {
      logs += await stopAll(children);
    }
    assertNoErrors(logs);
  });
});

const AGAIN = "the agent's, again\n";
const LINES = "line 1\nline 2\nline 3\nline 4\nline 5\n";

/** Files each made a true conflict (`null`: deleted on that side), then settled. */
const CONFLICTS = {
  "keep-local.txt": { base: "shared\n", person: "the person's\n", agent: "the agent's\n" },
  "keep-upstream.txt": { base: "shared\n", person: "the person's\n", agent: "the agent's\n" },
  "merge-clean.txt": {
    base: LINES,
    person: LINES.replace("line 1", "line 1 by the person"),
    agent: LINES.replace("line 5", "line 5 by the agent"),
  },
  "merge-markers.txt": {
    base: LINES,
    person: LINES.replace("line 3", "line 3 by the person"),
    agent: LINES.replace("line 3", "line 3 by the agent"),
  },
  "merge-moving.txt": {
    base: LINES,
    person: LINES.replace("line 3", "line 3 by the person"),
    agent: LINES.replace("line 3", "line 3 by the agent"),
  },
  "gone-here.txt": { base: "shared\n", person: null, agent: "the agent's\n" },
  "gone-there.txt": { base: "shared\n", person: "the person's\n", agent: null },
} as const;

/** Writes `text` to `root/path`, or removes the file for `null`. */
async function edit(root: string, path: string, text: string | null): Promise<void> {
  if (text === null) await Deno.remove(`${root}/${path}`);
  else await put(root, path, text);
}

/** The merge of an overlapping conflict of {@linkcode CONFLICTS}, with markers. */
const MARKED = "line 1\nline 2\n<<<<<<< local\nline 3 by the person\n=======\n" +
  "line 3 by the agent\n>>>>>>> upstream\nline 4\nline 5\n";

Deno.test("local-sync leaves true conflicts to the person and settles each resolution", async (t) => {
  await withTempDir(async (base) => {
    const agent = `${base}/agent`;
    const local = `${base}/local`;
    const paths = Object.keys(CONFLICTS) as (keyof typeof CONFLICTS)[];
    for (const path of paths) await put(agent, path, CONFLICTS[path].base);
    await Deno.mkdir(local);
    const children: Child[] = [];
    let logs = "";
    try {
      let master = await startMaster(agent);
      children.push(master);
      let replica = await startLocalSync(agent, local);
      children.push(replica);
      const { sandboxId } = await syncStatus(local);
      await waitForSameTrees([agent, local], { timeoutMs: DEADLINE_MS });

      await t.step("a change on both sides is a conflict, left on disk and listed", async () => {
        await master.stop();
        logs += master.output();
        children.splice(children.indexOf(master), 1);
        await waitFor("the replica to notice", async () => !(await syncStatus(local)).connected);
        for (const path of paths) await edit(local, path, CONFLICTS[path].person);
        // Journaled while the master is away.
        await waitFor("the person's edits to be journaled", async () => {
          return (await syncStatus(local)).journal.pending >= paths.length;
        }, { timeoutMs: DEADLINE_MS });
        for (const path of paths) await edit(agent, path, CONFLICTS[path].agent);
        master = await startMaster(agent);
        children.push(master);
        const status = await waitFor("a conflict for each file", async () => {
          const status = await syncStatus(local);
          const open = new Set(status.conflicts.map((c) => c.resolvedMs === null && c.path));
          const quiet = status.state === "live" && status.pendingWriteBacks === 0 &&
            status.appliedSequence >= status.masterSequence;
          return quiet && paths.every((path) => open.has(path)) ? status : undefined;
        }, { timeoutMs: DEADLINE_MS, intervalMs: 50 });
        // Newest first: each path's latest rejected write keeps the person's version.
        const latest = new Map<string, ConflictEntry>();
        for (const conflict of status.conflicts) {
          if (!latest.has(conflict.path)) latest.set(conflict.path, conflict);
        }
        assert.deepEqual(
          [...latest.values()].map((c) => [c.path, c.keptHash, c.resolution]).sort(),
          paths.map((path) => {
            const person = CONFLICTS[path].person;
            return [path, person === null ? null : sha256OfText(person), null];
          }).sort(),
        );
        for (const conflict of status.conflicts) assert.match(conflict.reason, /^conflict/);
        for (const path of paths) {
          assert.equal(await readText(`${local}/${path}`), CONFLICTS[path].person ?? undefined);
          assert.equal(await readText(`${agent}/${path}`), CONFLICTS[path].agent ?? undefined);
        }
        const listed = await chronicleJson<{ conflicts: ConflictEntry[] }>(
          ["conflicts", "-C", local, "--json"],
        );
        assert.deepEqual(
          [...new Set(listed.conflicts.map((c) => c.path))].sort(),
          [...paths].sort(),
        );
        const human = await runChronicle(["sync", "status", "-C", local]);
        assert.equal(human.code, 0, human.stderr);
        const openCount = status.conflicts.filter((c) => c.resolvedMs === null).length;
        assert.match(human.stdout, new RegExp(`open conflicts: ${openCount}\n`));
        assert.match(human.stdout, /keep-local\.txt: conflict/);
      });

      await t.step("a restart of local-sync keeps the open conflicts and the files", async () => {
        await replica.stop();
        logs += replica.output();
        children.splice(children.indexOf(replica), 1);
        replica = await startLocalSync(agent, local);
        children.push(replica);
        const status = await waitForQuiet(local);
        assert.equal(status.sandboxId, sandboxId);
        const open = status.conflicts.filter((c) => c.resolvedMs === null).map((c) => c.path);
        assert.deepEqual([...new Set(open)].sort(), [...paths].sort());
        for (const path of paths) {
          assert.equal(await readText(`${local}/${path}`), CONFLICTS[path].person ?? undefined);
        }
      });

      await t.step("the agent edits a conflicted file again: the person's file stays", async () => {
        for (const path of ["keep-local.txt", "keep-upstream.txt"] as const) {
          await put(agent, path, AGAIN);
          const { sequence } = await recordedOnAgent(agent, path, AGAIN);
          await waitFor(`the replica to reach ${sequence}`, async () => {
            return (await syncStatus(local)).appliedSequence >= sequence;
          }, { timeoutMs: DEADLINE_MS, intervalMs: 50 });
          assert.equal(await readText(`${local}/${path}`), CONFLICTS[path].person, path);
        }
      });

      await t.step("bad resolutions are refused with a clear error", async () => {
        const unknown = await runChronicle(
          ["sync", "resolve", "keep-nothing.txt", "--keep", "local", "-C", local],
        );
        assert.equal(unknown.code, 1);
        assert.match(unknown.stderr, /No open conflict for "keep-nothing\.txt"/);
        const badKeep = await runChronicle(
          ["sync", "resolve", "keep-local.txt", "--keep", "theirs", "-C", local],
        );
        assert.equal(badKeep.code, 2);
        const outside = await control(local, "/sync/resolve", {
          method: "POST",
          body: JSON.stringify({ path: "../escape.txt", keep: "local" }),
        });
        assert.equal(outside.status, 400);
        assert.equal(errorOf(outside.body).code, "bad_path");
        const badBody = await control(local, "/sync/resolve", { method: "POST", body: "{}" });
        assert.equal(badBody.status, 400);
        assert.equal(errorOf(badBody.body).code, "bad_request");
        const noisy = await control(local, "/sync/resolve", {
          method: "POST",
          body: JSON.stringify({ path: "notes.txt.swp", keep: "local" }),
        });
        assert.equal(noisy.status, 400, JSON.stringify(noisy.body));
        assert.match(errorOf(noisy.body).message, /notes\.txt\.swp/);
        // Nothing was settled by them.
        const open = (await syncStatus(local)).conflicts.filter((c) => c.resolvedMs === null);
        assert.deepEqual([...new Set(open.map((c) => c.path))].sort(), [...paths].sort());
      });

      await t.step("keep local: the agent ends with the person's content", async () => {
        const path = "keep-local.txt";
        const answer = await chronicleJson<{ state: string; keep: string }>(
          ["sync", "resolve", path, "--keep", "local", "-C", local, "--json"],
        );
        assert.equal(answer.state, "resolved");
        assert.equal(answer.keep, "local");
        await waitForText(`${agent}/${path}`, CONFLICTS[path].person);
        const last = await recordedOnAgent(agent, path, CONFLICTS[path].person);
        assert.equal(last.origin, sandboxId);
        assert.equal(await readText(`${local}/${path}`), CONFLICTS[path].person);
      });

      await t.step(
        "keep upstream: the person's file takes the agent's, kept in history",
        async () => {
          const path = "keep-upstream.txt";
          const answer = await control(local, "/sync/resolve", {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ path, keep: "upstream" }),
          });
          assert.equal(answer.status, 200);
          assert.equal((answer.body as { state: string }).state, "resolved");
          await waitForText(`${local}/${path}`, AGAIN);
          const mine = await chronicleJson<HistoryEntry[]>([
            "history",
            path,
            "--json",
            "-C",
            local,
          ]);
          const hashes = mine.map((entry) => entry.hash);
          assert.ok(hashes.includes(sha256OfText(CONFLICTS[path].person)), "the person's version");
          assert.equal(hashes.at(-1), sha256OfText(AGAIN));
          await waitForQuiet(local);
          const theirs = await historyOf(agent, path);
          assert.ok(!theirs.some((entry) => entry.origin === sandboxId), "nothing written back");
          assert.equal(await readText(`${agent}/${path}`), AGAIN);
        },
      );

      await t.step("keep merged, non-overlapping: both sides end with the merge", async () => {
        const path = "merge-clean.txt";
        const answer = await chronicleJson<{ state: string }>(
          ["sync", "resolve", path, "--keep", "merged", "-C", local, "--json"],
        );
        assert.equal(answer.state, "resolved");
        const merged = LINES.replace("line 1", "line 1 by the person")
          .replace("line 5", "line 5 by the agent");
        await waitForText(`${local}/${path}`, merged);
        await waitForText(`${agent}/${path}`, merged);
        assert.equal((await recordedOnAgent(agent, path, merged)).origin, sandboxId);
      });

      await t.step("keep merged, overlapping: markers, an edit, then settled", async () => {
        const path = "merge-markers.txt";
        const first = await chronicleJson<{ state: string; message: string }>(
          ["sync", "resolve", path, "--keep", "merged", "-C", local, "--json"],
        );
        assert.equal(first.state, "merging");
        assert.match(first.message, /--keep merged/);
        await waitForText(`${local}/${path}`, MARKED);
        const merging = (await syncStatus(local)).conflicts.filter((c) => c.path === path);
        assert.ok(merging.every((c) => c.resolvedMs === null), "still open while merging");
        // Resolving again before the markers are gone is refused.
        const early = await runChronicle(
          ["sync", "resolve", path, "--keep", "merged", "-C", local],
        );
        assert.equal(early.code, 1);
        assert.match(early.stderr, /still holds conflict markers/);
        // The person edits the markers away, as in an editor.
        const settled = LINES.replace("line 3", "line 3 by both");
        await Deno.writeTextFile(`${local}/${path}`, settled);
        const second = await chronicleJson<{ state: string }>(
          ["sync", "resolve", path, "--keep", "merged", "-C", local, "--json"],
        );
        assert.equal(second.state, "resolved");
        assert.equal((await recordedOnAgent(agent, path, settled)).origin, sandboxId);
        await waitForQuiet(local);
        const theirs = await historyOf(agent, path);
        assert.ok(
          !theirs.some((entry) => entry.hash === sha256OfText(MARKED)),
          "markers were sent",
        );
        assert.equal(await readText(`${local}/${path}`), settled);
      });

      await t.step(
        "keep merged, while the agent changes the file again: nothing lost",
        async () => {
          const path = "merge-moving.txt";
          const first = await chronicleJson<{ state: string }>(
            ["sync", "resolve", path, "--keep", "merged", "-C", local, "--json"],
          );
          assert.equal(first.state, "merging");
          await waitForText(`${local}/${path}`, MARKED);
          // While the person edits the markers, the agent changes another line.
          const moved = CONFLICTS[path].agent.replace("line 5", "line 5 by the agent");
          await put(agent, path, moved);
          const { sequence } = await recordedOnAgent(agent, path, moved);
          await waitFor(`the replica to reach ${sequence}`, async () => {
            return (await syncStatus(local)).appliedSequence >= sequence;
          }, { timeoutMs: DEADLINE_MS, intervalMs: 50 });
          assert.equal(await readText(`${local}/${path}`), MARKED);
          await Deno.writeTextFile(`${local}/${path}`, LINES.replace("line 3", "line 3 by both"));
          const second = await chronicleJson<{ state: string }>(
            ["sync", "resolve", path, "--keep", "merged", "-C", local, "--json"],
          );
          assert.equal(second.state, "resolved");
          // The person's settled line 3 and the agent's later line 5, on both sides.
          const expected = LINES.replace("line 3", "line 3 by both")
            .replace("line 5", "line 5 by the agent");
          assert.equal((await recordedOnAgent(agent, path, expected)).origin, sandboxId);
          await waitForText(`${local}/${path}`, expected);
        },
      );

      await t.step("a deletion against an edit: either side can win, none merges", async () => {
        for (const path of ["gone-here.txt", "gone-there.txt"]) {
          const merged = await runChronicle(
            ["sync", "resolve", path, "--keep", "merged", "-C", local],
          );
          assert.equal(merged.code, 1, `${path}: ${merged.stdout}`);
          assert.match(merged.stderr, /deleted on one side/);
        }
        assert.equal(await readText(`${local}/gone-here.txt`), undefined);
        const upstream = await chronicleJson<{ state: string }>(
          ["sync", "resolve", "gone-here.txt", "--keep", "upstream", "-C", local, "--json"],
        );
        assert.equal(upstream.state, "resolved");
        await waitForText(`${local}/gone-here.txt`, "the agent's\n");
        const kept = await chronicleJson<{ state: string }>(
          ["sync", "resolve", "gone-there.txt", "--keep", "local", "-C", local, "--json"],
        );
        assert.equal(kept.state, "resolved");
        await waitForText(`${agent}/gone-there.txt`, "the person's\n");
        const last = await recordedOnAgent(agent, "gone-there.txt", "the person's\n");
        assert.equal(last.origin, sandboxId);
      });

      await t.step("everything settled: no open conflict, both folders equal", async () => {
        const status = await waitForQuiet(local);
        assert.deepEqual(status.problems, []);
        const byPath = new Map<string, string | null>();
        for (const conflict of status.conflicts) {
          assert.notEqual(conflict.resolvedMs, null, `${conflict.path} still open`);
          byPath.set(conflict.path, conflict.resolution);
        }
        assert.deepEqual(Object.fromEntries([...byPath].sort()), {
          "keep-local.txt": "local",
          "keep-upstream.txt": "upstream",
          "merge-clean.txt": "merged",
          "merge-markers.txt": "merged",
          "merge-moving.txt": "merged",
          "gone-here.txt": "upstream",
          "gone-there.txt": "local",
        });
        await waitForSameTrees([agent, local], { timeoutMs: DEADLINE_MS });
      });
    } finally {
      logs += await stopAll(children);
    }
    assertNoErrors(logs);
  });
});

Deno.test("local-sync started with `sync start` converges after editing while disconnected", async () => {
  await withTempDir(async (base) => {
    const agent = `${base}/agent`;
    const local = `${base}/local`;
    for (const name of ["d1", "d2", "d3", "d4", "e"]) await put(agent, `${name}.txt`, `${name}\n`);
    await put(agent, "run.sh", "#!/bin/sh\necho hi\n", 0o644);
    const children: Child[] = [];
    let started = false;
    let logs = "";
    try {
      children.push(await startMaster(agent));
      const start = await runChronicle(
        ["sync", "start", local, "--connect", socketOf(agent), "--debounce-ms", "100"],
      );
      started = true;
      assert.equal(start.code, 0, start.stderr);
      assert.match(start.stdout, /local-sync running on/);
      await waitForLive(local);
      await waitForSameTrees([agent, local], { timeoutMs: DEADLINE_MS });
      const { sandboxId } = await syncStatus(local);

      logs += await stopAll(children);
      await waitFor("the replica to notice", async () => !(await syncStatus(local)).connected);
      // The person keeps working on several files.
      await put(local, "d1.txt", "d1 edited offline\n");
      await put(local, "d2.txt", "d2 first\n");
      await put(local, "d2.txt", "d2 second\n");
      await Deno.remove(`${local}/d3.txt`);
      await Deno.mkdir(`${local}/moved`);
      await Deno.rename(`${local}/d4.txt`, `${local}/moved/d4.txt`);
      await Deno.chmod(`${local}/run.sh`, 0o755);
      await put(local, "new/deep/file.txt", "made offline\n");
      await waitFor("the offline edits to be journaled", async () => {
        return (await syncStatus(local)).journal.pending >= 6;
      });
      // Meanwhile the agent changes another file.
      await put(agent, "e.txt", "e edited by the agent\n");
      await put(agent, "agent-only.txt", "from the agent\n");

      children.push(await startMaster(agent));
      await waitForSameTrees([agent, local], { timeoutMs: DEADLINE_MS });
      const status = await waitForQuiet(local);
      assert.deepEqual(status.conflicts, []);
      assert.ok(status.connections >= 2, "reconnected");
      assert.equal(await readText(`${agent}/d1.txt`), "d1 edited offline\n");
      assert.equal(await readText(`${agent}/d3.txt`), undefined);
      assert.equal(await readText(`${local}/e.txt`), "e edited by the agent\n");
      assert.equal((await Deno.stat(`${agent}/run.sh`)).mode! & 0o777, 0o755);
      const d1 = await recordedOnAgent(agent, "d1.txt", "d1 edited offline\n");
      assert.equal(d1.origin, sandboxId);
      assert.equal((await historyOf(agent, "moved/d4.txt")).at(-1)?.origin, sandboxId);
      const barrier = await runChronicle(["sync", "--wait", "-C", local]);
      assert.equal(barrier.code, 0, barrier.stderr);
      const twice = await runChronicle(["sync", "start", local, "--connect", socketOf(agent)]);
      assert.equal(twice.code, 1);
      assert.match(twice.stderr, /already running/);

      // The person closes local-sync, keeps editing, and starts it again.
      const stop = await runChronicle(["sync", "stop", "-C", local]);
      assert.equal(stop.code, 0, stop.stderr);
      started = false;
      const after = await runChronicle(["sync", "status", "-C", local]);
      assert.equal(after.code, 1);
      assert.match(after.stderr, /No Chronicle is running/);
      await put(local, "d2.txt", "d2 edited while stopped\n");
      await Deno.remove(`${local}/new/deep/file.txt`);
      await put(agent, "e.txt", "e edited again by the agent\n");
      started = true;
      const again = await runChronicle(["sync", "start", local, "--connect", socketOf(agent)]);
      assert.equal(again.code, 0, again.stderr);
      await waitForSameTrees([agent, local], { timeoutMs: DEADLINE_MS });
      const final = await waitForQuiet(local);
      assert.equal(final.sandboxId, sandboxId, "the same identity after a restart");
      assert.deepEqual(final.conflicts, []);
      assert.deepEqual(final.problems, []);
      assert.equal(await readText(`${agent}/d2.txt`), "d2 edited while stopped\n");
      assert.equal(await readText(`${agent}/new/deep/file.txt`), undefined);
      assert.equal(await readText(`${local}/e.txt`), "e edited again by the agent\n");
      const stopped = await runChronicle(["sync", "stop", "-C", local]);
      assert.equal(stopped.code, 0, stopped.stderr);
      started = false;
    } finally {
      if (started) await stopDetached(local);
      logs += await stopAll(children);
    }
    logs += await readText(`${local}/.chronicle/local-sync.log`) ?? "";
    assertNoErrors(logs);
  });
});
