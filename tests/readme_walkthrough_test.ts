/**
 * The README's walkthrough, run as written: its `sh` blocks, in order, in one bash, with
 * `chronicle` on PATH as `deno task install` puts it (a link to ./chronicle). So the README
 * cannot drift from what Chronicle does.
 *
 * @module
 */
import { ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { freePort, PROJECT_ROOT } from "./_helpers/processes.ts";
import { withTempDir } from "./_helpers/temp_dir.ts";

/** The `sh` blocks of the README section that starts with `heading`, in order. */
export function shellBlocks(markdown: string, heading: string): string[] {
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start === -1) throw new Error(`No section "${heading}" in the README`);
  const next = markdown.indexOf("\n## ", start + heading.length + 2);
  const section = markdown.slice(start, next === -1 ? undefined : next);
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);
}

Deno.test("shellBlocks() finds a section's sh blocks only", () => {
  const markdown =
    "# T\n\n## A\n\n```sh\none\n```\n\n```text\nno\n```\n\n```sh\ntwo\n```\n\n## B\n\n```sh\nthree\n```\n";
  strictEqual(JSON.stringify(shellBlocks(markdown, "## A")), JSON.stringify(["one\n", "two\n"]));
});

Deno.test("the README's five-minute walkthrough runs as written", async () => {
  const readme = await Deno.readTextFile(join(PROJECT_ROOT, "README.md"));
  const blocks = shellBlocks(readme, "## Five-minute walkthrough");
  ok(blocks.length >= 4, `found ${blocks.length} blocks`);
  await withTempDir(async (dir) => {
    const bin = join(dir, "bin");
    await Deno.mkdir(bin);
    await Deno.symlink(join(PROJECT_ROOT, "chronicle"), join(bin, "chronicle"));
    const script = [
      "set -euo pipefail",
      // Whatever happens, no Chronicle this script started outlives it.
      "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT",
      ...blocks.map((block, i) => `echo "=== block ${i + 1}" >&2\n${block}`),
      'echo "=== walkthrough done" >&2',
    ].join("\n");
    const { code, stdout, stderr } = await new Deno.Command("bash", {
      args: ["-c", script],
      cwd: dir,
      env: {
        PATH: `${bin}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`,
        HOME: Deno.env.get("HOME") ?? dir,
        TMPDIR: dir,
        PORT: String(freePort()), // never a fixed port in tests
        NO_COLOR: "1",
      },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const out = new TextDecoder().decode(stdout);
    const err = new TextDecoder().decode(stderr);
    const shown = `exit ${code}\nstdout:\n${out}\nstderr:\n${err}`;
    strictEqual(code, 0, shown);
    ok(err.includes("=== walkthrough done"), shown);
    // What the comments promise.
    ok(/^ITER\s+TIME\s+SIZE\s+HASH\s+ORIGIN\s+SEQ$/m.test(out), shown);
    ok(/^v1$/m.test(out), "cat --at 1 printed v1");
    ok(/modified\s+notes\.md/.test(out), "diff named notes.md");
    ok(/^from the agent$/m.test(out), "the sandbox got a.txt");
    ok(/^chronicle:\s+running, pid \d+/m.test(out), "status of a running agent");
    ok(/^REPLICA\s+CONNECTED\s+ACKED\s+LAG\s+LAST SEEN\s+FROM$/m.test(out), "the replicas table");
  }, "chronicle-walkthrough-");
});
