/**
 * `chronicle watch` against a real running Chronicle, both as child processes: what is
 * recorded shows up on watch's stdout as it happens; Ctrl-C ends it cleanly, and so does
 * Chronicle stopping, which it says.
 */
import assert from "node:assert/strict";
import {
  type Child,
  MAIN,
  PROJECT_ROOT,
  runChronicle,
  spawnChronicle,
} from "../_helpers/processes.ts";
import { put, putAtomic, withTempDir } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import { Workspace } from "../../lib/workspace/mod.ts";

/** A `chronicle watch` child whose stdout lines and stderr are collected as they come. */
interface Watcher {
  lines: string[];
  stderr(): string;
  process: Deno.ChildProcess;
  /** Waits for the exit; returns the code. */
  exited(): Promise<number>;
}

function spawnWatch(root: string, ...args: string[]): Watcher {
  const process = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "watch", "-C", root, ...args],
    cwd: PROJECT_ROOT,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const lines: string[] = [];
  let errors = "";
  const decoder = new TextDecoder();
  const readOut = (async () => {
    let buffer = "";
    for await (const chunk of process.stdout) {
      buffer += decoder.decode(chunk, { stream: true });
      const parts = buffer.split("\n");
      buffer = parts.pop()!;
      lines.push(...parts);
    }
  })();
  const readErr = (async () => {
    const errorDecoder = new TextDecoder();
    for await (const chunk of process.stderr) {
      errors += errorDecoder.decode(chunk, { stream: true });
    }
  })();
  return {
    lines,
    stderr: () => errors,
    process,
    exited: async () => {
      const status = await process.status;
      await Promise.all([readOut, readErr]);
      return status.code;
    },
  };
}

async function startChronicle(root: string): Promise<Child> {
  const child = spawnChronicle([root]);
  await waitFor("Chronicle ready", async () => {
    const health = await runChronicle(["status", "--json", "-C", root]);
    return health.code === 0 && JSON.parse(health.stdout).running === true;
  }, { timeoutMs: 30_000 });
  return child;
}

/** Waits for watch to be connected: it says so on stderr once Chronicle answered. */
async function connected(watch: Watcher): Promise<void> {
  await waitFor("watch connected", () => /^watching /m.test(watch.stderr()), { timeoutMs: 30_000 });
}

Deno.test("chronicle watch --json prints each iteration as Chronicle records it, and says when Chronicle stops", () =>
  withTempDir(async (root) => {
    await put(root, "before.txt", "recorded before watch started");
    const chronicle = await startChronicle(root);
    let watch: Watcher | undefined;
    try {
      watch = spawnWatch(root, "--json");
      await connected(watch);
      // In one step: the empty file of a truncate, captured alone, would be the first
      // notes.md line, of size 0.
      await putAtomic(root, "notes.md", "written on disk while watched");
      const line = await waitFor(
        "notes.md in watch's output",
        () => watch!.lines.find((l) => l.includes('"notes.md"')),
        { timeoutMs: 30_000 },
      );
      const event = JSON.parse(line);
      assert.equal(event.path, "notes.md");
      assert.equal(event.origin, "local");
      assert.equal(event.size, "written on disk while watched".length);
      assert.equal(event.deleted, false);
      assert.ok(event.sequence > 1);
      assert.ok(!watch.lines.some((l) => l.includes("before.txt")), "starts at now by default");
    } finally {
      assert.equal(await chronicle.stop(), 0, chronicle.output());
    }
    assert.equal(await watch!.exited(), 1);
    assert.match(watch!.stderr(), /error: Chronicle on ".*" stopped: nothing more to watch/);
  }));

Deno.test("chronicle watch --since, --path and --origin choose what is shown; Ctrl-C ends it cleanly", () =>
  withTempDir(async (root) => {
    await put(root, "src/a.ts", "a1");
    await put(root, "docs/readme.md", "r1");
    // The history is made before Chronicle starts, so its sequences are known here.
    const workspace = await Workspace.open({ root });
    const sequences: number[] = []; // of src/a.ts's three iterations
    try {
      await workspace.scan();
      const first = workspace.store.latest("src/a.ts")!;
      await put(root, "src/a.ts", "a2");
      await workspace.scan();
      await workspace.writeContent("src/a.ts", first.hash, first.mode, { origin: "restore" });
      sequences.push(...workspace.store.history("src/a.ts").map((it) => it.sequence));
    } finally {
      await workspace.close();
    }
    const chronicle = await startChronicle(root);
    try {
      const watch = spawnWatch(root, "--since", "0", "--path", "src/");
      const restores = spawnWatch(root, "--since", "0", "--origin", "restore", "--json");
      try {
        await waitFor("src/ iterations", () => watch.lines.length === 3);
        assert.match(
          watch.lines[0]!,
          new RegExp(
            `^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} {2}seq ${sequences[0]} {2}local {2}src/a\\.ts {2}2 B$`,
          ),
        );
        assert.deepEqual(
          watch.lines.map((l) => l.split("  ").slice(1, 3).join(" ")),
          [`seq ${sequences[0]} local`, `seq ${sequences[1]} local`, `seq ${sequences[2]} restore`],
        );
        await waitFor("the restore", () => restores.lines.length === 1);
        assert.deepEqual(
          restores.lines.map((l) => [JSON.parse(l).path, JSON.parse(l).origin]),
          [["src/a.ts", "restore"]],
        );
        await connected(watch);
      } finally {
        watch.process.kill("SIGINT");
        restores.process.kill("SIGINT");
      }
      assert.equal(await watch.exited(), 0, watch.stderr());
      assert.match(watch.stderr(), /stopped watching/);
      assert.equal(await restores.exited(), 0, restores.stderr());
    } finally {
      assert.equal(await chronicle.stop(), 0, chronicle.output());
    }
  }));

Deno.test("chronicle watch says plainly when no Chronicle runs on the workspace", () =>
  withTempDir(async (root) => {
    await put(root, "a.txt", "a");
    const chronicle = await startChronicle(root);
    assert.equal(await chronicle.stop(), 0); // leaves a workspace that nothing runs on
    const watch = await runChronicle(["watch", "-C", root]);
    assert.equal(watch.code, 1);
    assert.match(watch.stderr, /^error: No Chronicle is running on ".*": start it/);
    const help = await runChronicle(["watch", "--help"]);
    assert.equal(help.code, 0);
    assert.match(
      help.stdout,
      /chronicle watch \[--since SEQ\] \[--path PREFIX\] \[--origin ORIGIN\]/,
    );
  }));
