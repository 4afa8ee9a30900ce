import assert from "node:assert/strict";
import { Workspace } from "../../lib/workspace/mod.ts";
import { INVALID_UTF8_REASON } from "../../lib/workspace/recordable.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";

/** Runs a shell command (names that are not UTF-8 cannot be made from JavaScript). */
function sh(script: string, cwd: string): void {
  const result = new Deno.Command("sh", { args: ["-c", script], cwd }).outputSync();
  if (!result.success) throw new Error(new TextDecoder().decode(result.stderr));
}

/**
 * Runs `_pipe_child.ts` in `mode` on a workspace with a folder `sub`.
 *
 * @returns Its outcome ("recorded", "late", or "no outcome (stuck)"), and what its scan
 * could not record (`scan` mode). Its log is printed unless it recorded.
 */
async function pipeChild(
  mode: "scan" | "probe" | "unreachable",
): Promise<{ outcome: string; problems: unknown }> {
  return await withTempDir(async (root) => {
    Deno.mkdirSync(`${root}/sub`);
    const result = `${root}.result`;
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        new URL("./_pipe_child.ts", import.meta.url).pathname,
        root,
        result,
        mode,
      ],
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const stderr = new Response(child.stderr).text();
    let outcome = "not started";
    try {
      outcome = await waitFor(
        "the child's outcome",
        () => Deno.readTextFileSync(result),
        { timeoutMs: 90_000 },
      ).catch(() => "no outcome (stuck)");
      const problems = mode === "scan"
        ? JSON.parse(Deno.readTextFileSync(`${result}.problems`))
        : null;
      return { outcome, problems };
    } finally {
      try {
        child.kill("SIGKILL");
      } catch { /* ended */ }
      await child.status;
      for (const file of [result, `${result}.problems`]) {
        await Deno.remove(file).catch(() => undefined);
      }
      const log = await stderr;
      if (outcome !== "recorded") console.error(log);
    }
  });
}

Deno.test("a named pipe made while a workspace is watched does not stop its watcher", async () => {
  const { outcome, problems } = await pipeChild("scan");
  assert.equal(outcome, "recorded");
  assert.deepEqual(problems, [{
    path: "sub/p",
    reason: "a named pipe: special files (named pipes, sockets, devices) are not recorded",
  }]);
});

Deno.test("a watcher stalled on a named pipe is found by its probe, long before a safety rescan", async () => {
  // No scan but the one the stall calls for: a safety rescan is an hour away.
  const { outcome } = await pipeChild("probe");
  assert.equal(outcome, "recorded");
});

Deno.test("a watcher stalled on a named pipe no scan reaches is made again on a new thread", async () => {
  // The pipe is in an ignored folder: the scan the stall calls for never holds it.
  const { outcome } = await pipeChild("unreachable");
  assert.equal(outcome, "recorded");
});

Deno.test("a scan reports special files and names that are not UTF-8, and opens none", () =>
  withTempDir(async (root) => {
    Deno.mkdirSync(`${root}/sub`);
    sh("mkfifo sub/pipe && printf x > \"sub/$(printf 'lat\\351n.txt')\"", root);
    const listener = Deno.listen({ transport: "unix", path: `${root}/sub/socket` });
    const workspace = await Workspace.open({ root });
    try {
      // A scan that opened the pipe for reading would wait here for a writer, forever.
      const { problems } = await workspace.scan();
      const reasons = new Map(problems.map((p) => [p.path, p.reason]));
      assert.equal(reasons.get("sub/lat\uFFFDn.txt"), INVALID_UTF8_REASON);
      assert.match(reasons.get("sub/pipe") ?? "", /^a named pipe: special files/);
      assert.match(reasons.get("sub/socket") ?? "", /^a socket: special files/);
      assert.equal(problems.length, 3, JSON.stringify(problems));
      assert.deepEqual(workspace.store.list({}).map((i) => i.path), ["sub"]);
    } finally {
      await workspace.close();
      listener.close();
    }
  }));

Deno.test("a watched workspace records no path its scan refuses", () =>
  withTempDir(async (root) => {
    const workspace = await Workspace.open({ root });
    try {
      // No safety rescan: only the watcher looks.
      await workspace.watch({ rescanMs: 3_600_000, scanAtStart: false });
      Deno.writeTextFileSync(`${root}/back\\slash.txt`, "x");
      Deno.writeTextFileSync(`${root}/new\nline.txt`, "x");
      // One watch reports in order: once this is recorded, the others were captured.
      Deno.writeTextFileSync(`${root}/after.txt`, "x");
      await waitFor("after.txt recorded", () => workspace.store.latest("after.txt"));
      await workspace.settled();
      assert.deepEqual(workspace.store.list({}).map((i) => i.path), ["after.txt"]);
    } finally {
      await workspace.close();
    }
  }));

Deno.test("a watched workspace records a link to outside it by its watcher, not at the next rescan", () =>
  withTempDir(async (root) => {
    Deno.mkdirSync(`${root}/venv/bin`, { recursive: true });
    const workspace = await Workspace.open({ root });
    try {
      await workspace.watch({ rescanMs: 3_600_000 });
      await waitFor("the first scan", () => workspace.store.latest("venv") !== undefined);
      Deno.symlinkSync(Deno.execPath(), `${root}/venv/bin/python`);
      await waitFor(
        "venv/bin/python recorded",
        () => workspace.store.latest("venv/bin/python") !== undefined,
        { timeoutMs: 20_000 },
      );
      const link = workspace.store.latest("venv/bin/python")!;
      assert.equal(
        new TextDecoder().decode(await workspace.cas.readBytes(link.hash)),
        Deno.execPath(),
      );
    } finally {
      await workspace.close();
    }
  }));
