import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { join } from "node:path";
import { configCommand } from "../../lib/cli/config_command.ts";
import { describeConfig, resolveConfig } from "../../lib/config/mod.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

Deno.test("describeConfig() masks the token and URL credentials and names each source", () => {
  const config = resolveConfig({
    argv: ["/tmp/ws", "--token", "s3cret-token", "--quiet"],
    env: { CHRONICLE_AGENT_URL: "wss://user:pa55@agent.example:3002/ws?token=abc&x=1" },
  });
  const described = describeConfig(config);
  assertEquals(described.token, { value: "****", source: "flag", name: "--token" });
  assertEquals(described.wsConnect, {
    value: "wss://user:****@agent.example:3002/ws?token=****&x=1",
    source: "env",
    name: "CHRONICLE_AGENT_URL",
  });
  assertEquals(described.quiet, { value: true, source: "flag", name: "--quiet" });
  assertEquals(described["snapshots.maxSnapshots"], { value: 100, source: "default" });
  assertEquals(described.http, { value: null, source: "default" });
  assertEquals(described.configFile, { value: null, source: "default" });
  ok(!JSON.stringify(described).includes("s3cret"));
  ok(!JSON.stringify(described).includes("pa55"));
});

Deno.test("describeConfig() shows an unset token as null", () => {
  assertEquals(describeConfig(resolveConfig({ argv: ["/tmp/ws"], env: {} })).token, {
    value: null,
    source: "default",
  });
});

Deno.test("configCommand() prints text and JSON with secrets masked", async (t) => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(join(dir, ".chronicle"));
    const file = join(dir, ".chronicle/config.yaml");
    await Deno.writeTextFile(file, "token: file-secret\nheartbeat_ms: 250\n");
    const run = async (args: string[]) => {
      const lines: string[] = [];
      const status = await configCommand(args, {
        env: {},
        print: (line) => lines.push(line),
        note: () => {},
      });
      assertEquals(status, 0);
      return lines;
    };
    await t.step("text", async () => {
      const lines = await run(["-C", dir]);
      ok(lines.some((line) => /^token\s+\*\*\*\*\s+\(file token\)$/.test(line)), lines.join("\n"));
      ok(lines.some((line) => /^heartbeat_ms\s+250\s+\(file heartbeat_ms\)$/.test(line)));
      ok(lines.some((line) => /^debounce_ms\s+50\s+\(default\)$/.test(line)));
      ok(!lines.join("\n").includes("file-secret"));
    });
    await t.step("json", async () => {
      const lines = await run([dir, "--json", "--debounce-ms", "5"]);
      const described = JSON.parse(lines.join("\n"));
      assertEquals(described.token, { value: "****", source: "file", name: "token" });
      assertEquals(described.debounce_ms, { value: 5, source: "flag", name: "--debounce-ms" });
      assertEquals(described.config_file, { value: file, source: "default" });
    });
  }, "chronicle-config-cmd-");
});
