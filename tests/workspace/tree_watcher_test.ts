import assert from "node:assert/strict";
import { TreeWatcher } from "../../lib/workspace/tree_watcher.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";

Deno.test("TreeWatcher reports a change inside a top folder once, not by the root's watch as well", () =>
  withTempDir(async (root) => {
    Deno.mkdirSync(`${root}/src`);
    const events: Deno.FsEvent[] = [];
    const watcher = new TreeWatcher(root, () => false, undefined, (event) => events.push(event));
    await watcher.start();
    try {
      Deno.writeTextFileSync(`${root}/src/a.ts`, "export {};\n");
      // The root's watch reports events in order: once it reports this file, it has handed
      // over whatever it had of src/a.ts.
      Deno.writeTextFileSync(`${root}/after`, "");
      const about = (path: string, kind: string) =>
        events.filter((event) => event.kind === kind && event.paths.includes(path)).length;
      await waitFor(
        "the folder's report of src/a.ts and the root's of after",
        () => about(`${root}/src/a.ts`, "create") > 0 && about(`${root}/after`, "create") > 0,
      );
      assert.equal(about(`${root}/src/a.ts`, "create"), 1, JSON.stringify(events));
      assert.equal(about(`${root}/after`, "create"), 1, JSON.stringify(events));
    } finally {
      await watcher.close();
    }
  }));

/**
 * Runs `work` with a TreeWatcher started on a fresh root holding `sub/`, and the events it
 * reported so far; closes it after.
 *
 * @param backlog The watcher's backlog (its default when undefined).
 */
function withWatcher(
  backlog: number | undefined,
  work: (root: string, events: Deno.FsEvent[]) => Promise<void>,
): Promise<void> {
  return withTempDir(async (root) => {
    Deno.mkdirSync(`${root}/sub`);
    const events: Deno.FsEvent[] = [];
    const watcher = new TreeWatcher(root, () => false, backlog, (event) => events.push(event));
    await watcher.start();
    try {
      await work(root, events);
    } finally {
      await watcher.close();
    }
  });
}

/**
 * Runs a shell command in `root` while this thread waits for it without turning its event
 * loop (nothing of the main thread runs meanwhile).
 */
function runBlocking(root: string, script: string): void {
  const made = new Deno.Command("sh", { args: ["-c", script], cwd: root }).outputSync();
  assert.ok(made.success, new TextDecoder().decode(made.stderr));
}

/** Makes `sub/f0` to `sub/f999`: about 3,000 events (each file created, written, closed). */
const THOUSAND_FILES = 'i=0; while [ $i -lt 1000 ]; do echo x > "sub/f$i"; i=$((i+1)); done';

Deno.test("TreeWatcher makes a watch that a name not in UTF-8 ended again, and reports the loss", () =>
  withWatcher(undefined, async (root, events) => {
    // Deno ends every watch that is handed an event whose path is not UTF-8.
    runBlocking(root, "printf x > \"sub/$(printf 'lat\\351n.txt')\"");
    await waitFor("a report of lost events", () => events.some((e) => e.flag === "rescan"));
    // Made again after its delay: later changes are reported, in the folder and the root.
    await waitFor("events of sub/after.txt and top.txt", () => {
      Deno.writeTextFileSync(`${root}/sub/after.txt`, String(Date.now()));
      Deno.writeTextFileSync(`${root}/top.txt`, String(Date.now()));
      const about = (path: string) => events.some((e) => e.paths.includes(`${root}/${path}`));
      return about("sub/after.txt") && about("top.txt");
    }, { intervalMs: 200 });
  }));

Deno.test("TreeWatcher loses no event while the main thread is busy", () =>
  withWatcher(undefined, async (root, events) => {
    // Three times what Deno holds for a watch read on a thread that is busy.
    runBlocking(root, THOUSAND_FILES);
    const reported = () => {
      const paths = new Set(events.flatMap((event) => event.paths));
      return Array.from({ length: 1000 }, (_, i) => `${root}/sub/f${i}`)
        .filter((path) => paths.has(path)).length;
    };
    const lost = () => events.filter((event) => event.flag === "rescan" || event.kind === "other");
    await waitFor(
      "every file reported, or a loss",
      () => reported() === 1000 || lost().length > 0,
    );
    assert.deepEqual(lost(), [], "events were lost");
    assert.equal(reported(), 1000);
  }));

Deno.test("TreeWatcher reports a loss when more events wait than its backlog, and goes on", () =>
  withWatcher(100, async (root, events) => {
    // While the main thread handles none: past the backlog of 100.
    runBlocking(root, THOUSAND_FILES);
    await waitFor("a report of the loss", () => events.some((event) => event.flag === "rescan"));
    Deno.writeTextFileSync(`${root}/sub/after.txt`, "after the loss");
    await waitFor(
      "the event of sub/after.txt",
      () => events.some((event) => event.paths.includes(`${root}/sub/after.txt`)),
    );
  }));

Deno.test("TreeWatcher reports a link made to outside the workspace, which Deno hands no watch of it", () =>
  withTempDir(async (root) => {
    Deno.mkdirSync(`${root}/venv/bin`, { recursive: true });
    const outside = await Deno.makeTempDir();
    const events: Deno.FsEvent[] = [];
    const watcher = new TreeWatcher(root, () => false, undefined, (event) => events.push(event));
    await watcher.start();
    try {
      Deno.symlinkSync(Deno.execPath(), `${root}/venv/bin/python`);
      Deno.symlinkSync(outside, `${root}/venv/lib`);
      Deno.symlinkSync("../bin", `${root}/venv/bin/inside`);
      Deno.writeTextFileSync(`${root}/venv/after`, "");
      const about = (path: string) =>
        events.filter((event) => event.paths.includes(`${root}/${path}`)).length;
      await waitFor(
        "reports of both links to outside, and of what came after them",
        () => about("venv/bin/python") > 0 && about("venv/lib") > 0 && about("venv/after") > 0,
      );
      // Nothing but links is handed over twice: the workspace's watches report the rest.
      const afterCreated = events.filter((event) =>
        event.kind === "create" && event.paths.includes(`${root}/venv/after`)
      );
      assert.equal(afterCreated.length, 1, JSON.stringify(events));
      assert.ok(about("venv/bin/inside") > 0, JSON.stringify(events));
    } finally {
      await watcher.close();
      await Deno.remove(outside);
    }
  }));
