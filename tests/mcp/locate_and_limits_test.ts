// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { BINARY_PERMISSIONS } from "../../lib/cli/sync_commands.ts";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { MAIN, PROJECT_ROOT } from "../_helpers/processes.ts";
import { putAtomic, withTempDir } from "../_helpers/temp_dir.ts";
import { call, ok, startChronicle, type StdioOptions, stdioTransport, until } from "./_mcp.ts";

Deno.test("chronicle mcp finds its workspace upwards from the current folder, or by --data-dir", () =>
  withTempDir(async (base) => {
    const [found, elsewhere] = [`${base}/found`, `${base}/elsewhere`];
    await Deno.mkdir(`${found}/src/deep`, { recursive: true });
    await Deno.mkdir(elsewhere);
    const data = `${base}/data-outside`;
    const runs = [
      await startChronicle(found),
      await startChronicle(elsewhere, ["--data-dir", data]),
    ];
    const cases: Array<{ description: string; options: StdioOptions; expected: string }> = [
      {
        description: "no flag, from a subfolder",
        options: { locate: [], cwd: `${found}/src/deep` },
        expected: found,
      },
      { description: "--data-dir", options: { locate: ["--data-dir", data] }, expected: elsewhere },
    ];
    try {
      for (const { description, options, expected } of cases) {
        const client = new Client({ name: "locate-test", version: "1.0.0" });
        try {
          await client.connect(stdioTransport(expected, options));
          assertEquals((await ok(client, "status")).json.workspace, expected, description);
        } finally {
          await client.close();
        }
      }
    } finally {
      for (const run of runs) await run.child.stop();
    }
  }));

Deno.test("content too large to diff or to return as a resource is refused with a way to read it; a long patch is cut", () =>
  withTempDir(async (root) => {
    const running = await startChronicle(root);
    const client = new Client({ name: "limits-test", version: "1.0.0" });
    try {
      await client.connect(stdioTransport(root));
      const big = new Uint8Array(9 * 1024 * 1024).fill(0x61);
      // Each write in one step: a capture between a truncate and its write would record the
      // empty file as an iteration of its own, and iterations are counted and read by number.
      await putAtomic(root, "huge.txt", "small\n");
      await until(
        "huge.txt recorded",
        client,
        "file_history",
        { path: "huge.txt" },
        (a) => !a.isError,
      );
      await putAtomic(root, "huge.txt", big);
      await until(
        "the large version recorded",
        client,
        "file_history",
        { path: "huge.txt" },
        (a) => a.json?.total === 2,
      );
      const diff = await call(client, "diff_file", { path: "huge.txt", from: 1 });
      assert(diff.isError, diff.text);
      assert(diff.text.includes("too large to diff"), diff.text);
      assert(diff.text.includes("read_file"), diff.text);
      await client.readResource({ uri: "chronicle://files/huge.txt?iteration=2" }).then(
        () => assert(false, "a 9 MiB resource is refused"),
        (error: Error) => assert(error.message.includes("read_file"), error.message),
      );
      const window = await ok(client, "read_file", { path: "huge.txt", offset: 1024 * 1024 });
      assert(window.text.includes("offset=1114112"), window.text);
      const small = await client.readResource({ uri: "chronicle://files/huge.txt?iteration=1" });
      assertEquals((small.contents[0] as { text: string }).text, "small\n");

      // One file's patch in a snapshot diff is cut on its own, so it cannot fill the answer.
      const lines = (word: string) =>
        Array.from({ length: 3000 }, (_, i) => `${word} ${i}\n`).join("");
      await putAtomic(root, "wide.txt", lines("before"));
      await until(
        "wide.txt recorded",
        client,
        "file_history",
        { path: "wide.txt" },
        (a) => !a.isError,
      );
      const taken = await ok(client, "take_snapshot", {
        action_type: "write_file",
        path: "wide.txt",
      });
      await putAtomic(root, "wide.txt", lines("after"));
      await until(
        "the rewrite recorded",
        client,
        "file_history",
        { path: "wide.txt" },
        (a) => a.json?.total === 2,
      );
      const diff2 = await ok(client, "snapshot_diff", { snapshot_id: taken.json.snapshot.id });
      const patch = diff2.json.changes[0].patch as string;
      assert(patch.includes("[truncated: "), patch.slice(-300));
      assert(patch.endsWith("diff_file shows its iterations]"), patch.slice(-300));
      assert(!diff2.text.includes("narrow the request"), "the answer itself is whole JSON");
    } finally {
      await client.close();
      await running.child.stop();
    }
  }));

Deno.test("chronicle mcp answers an over-long stdin line with an error and goes on serving", () =>
  withTempDir(async (root) => {
    const running = await startChronicle(root);
    const bridge = new Deno.Command(Deno.execPath(), {
      args: ["run", ...BINARY_PERMISSIONS, MAIN, "mcp", "-C", root],
      cwd: PROJECT_ROOT,
      env: { NO_COLOR: "1" },
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    try {
      const writer = bridge.stdin.getWriter();
      const encoder = new TextEncoder();
      const huge = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "ping",
        params: { pad: "x".repeat(5 * 1024 * 1024) },
      });
      await writer.write(encoder.encode(huge + "\n"));
      await writer.write(encoder.encode("not json\n"));
      await writer.write(
        encoder.encode(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }) + "\n"),
      );
      await writer.close();
      const lines = new TextDecoder().decode((await bridge.output()).stdout).trim().split("\n")
        .map((line) => JSON.parse(line));
      assertEquals(lines.length, 3, JSON.stringify(lines));
      assertEquals(lines[0].id, null);
      assert(lines[0].error.message.includes("longer than 4194304 bytes"), lines[0].error.message);
      assertEquals(lines[1].error.code, -32700);
      assertEquals(lines[2], { jsonrpc: "2.0", id: 2, result: {} });
    } finally {
      await running.child.stop();
    }
  }));
