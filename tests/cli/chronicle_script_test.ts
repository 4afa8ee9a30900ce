/**
 * `./chronicle`, the script that runs Chronicle from source: from any folder, keeping the
 * caller's folder, with the binaries' permissions, signals passed through; and the launcher
 * `deno task install` writes.
 */
import { ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { BINARY_PERMISSIONS, BINARY_V8_FLAGS } from "../../lib/cli/sync_commands.ts";
import { PROJECT_ROOT } from "../_helpers/processes.ts";
import { put, withTempDir } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";

const SCRIPT = join(PROJECT_ROOT, "chronicle");

/** Runs a program to completion with `NO_COLOR`, returning its code and output. */
async function run(program: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  const out = await new Deno.Command(program, {
    args,
    cwd,
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
  }).output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test("./chronicle grants exactly the compiled binaries' permissions and V8 flags", async () => {
  const text = await Deno.readTextFile(SCRIPT);
  const line = /^PERMISSIONS=\(([^)]*)\)$/m.exec(text);
  ok(line, "the script names its permissions in one PERMISSIONS=(…) line");
  strictEqual(line[1]!.trim().split(/\s+/).join(" "), BINARY_PERMISSIONS.join(" "));
  const flags = /^V8_FLAGS=\(([^)]*)\)$/m.exec(text);
  ok(flags, "the script names its V8 flags in one V8_FLAGS=(…) line");
  strictEqual(flags[1]!.trim().split(/\s+/).join(" "), BINARY_V8_FLAGS.join(" "));
  ok(/^exec "\$deno_bin" run /m.test(text), "the script execs Deno, so signals reach Chronicle");
  ok(((await Deno.stat(SCRIPT)).mode! & 0o111) !== 0, "the script is executable");
});

Deno.test("./chronicle runs from another folder: relative paths and discovery use the caller's folder, SIGINT shuts down cleanly", async () => {
  await withTempDir(async (dir) => {
    await put(dir, "ws/notes.md", "v1\n");
    await Deno.mkdir(join(dir, "ws/sub"));
    // A deno.json of the caller's own must not take the place of Chronicle's.
    await put(dir, "deno.json", '{ "imports": { "hono": "npm:left-pad@1.3.0" } }\n');
    const child = new Deno.Command(SCRIPT, {
      args: ["ws", "--token", "secret-token-value"],
      cwd: dir,
      env: { NO_COLOR: "1" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    let output = "";
    const decoder = new TextDecoder();
    const drained = Promise.all([child.stdout, child.stderr].map(async (stream) => {
      for await (const chunk of stream) output += decoder.decode(chunk, { stream: true });
    }));
    try {
      // `ws` is the caller's ./ws, not a folder of the checkout.
      const socket = join(dir, "ws/.chronicle/control.sock");
      await waitFor("the control socket", () => exists(socket));
      await waitFor("a ready Chronicle", async () => {
        const health = await run(SCRIPT, ["health", "--ready", "-C", "ws"], dir);
        return health.code === 0;
      });
      // Discovery from a folder inside the workspace, like git.
      const history = await run(SCRIPT, ["history", "notes.md"], join(dir, "ws/sub"));
      strictEqual(history.code, 0, history.stderr);
      ok(history.stdout.includes("#1"), history.stdout);
      child.kill("SIGINT");
      const status = await child.status;
      await drained;
      strictEqual(status.code, 0, output);
      ok(output.includes("shutting down"), output);
      ok(!exists(socket), "a clean shutdown removes the control socket");
      ok(!output.includes("secret-token-value"), "the token is never echoed");
      ok(!exists(join(PROJECT_ROOT, "ws")), "nothing was made in the checkout");
    } finally {
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
      await drained.catch(() => undefined);
    }
  });
});

Deno.test("deno task install writes a launcher that runs this checkout from anywhere", async () => {
  await withTempDir(async (dir) => {
    const installed = await run("sh", [join(PROJECT_ROOT, "bin/install.sh"), "--prefix", dir], dir);
    strictEqual(installed.code, 0, installed.stderr);
    const launcher = join(dir, "bin/chronicle");
    ok(installed.stdout.includes(launcher), installed.stdout);
    const version = await run(launcher, ["--version"], dir);
    strictEqual(version.code, 0, version.stderr);
    ok(/^chronicle \d+\.\d+\.\d+/.test(version.stdout), version.stdout);
    const bad = await run("sh", [join(PROJECT_ROOT, "bin/install.sh"), "--frobnicate"], dir);
    strictEqual(bad.code, 2);
    ok(bad.stderr.includes("unknown argument '--frobnicate'"), bad.stderr);
  });
});
