import { deepStrictEqual as assertEquals, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { binaryPermissions, ROOT, toolchainEnv } from "./_deploy.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

/** Reads the flat subset of TOML e2b.toml uses: `key = "string"` and `key = integer`. */
function parseFlatToml(text: string): Record<string, string | number> {
  const table: Record<string, string | number> = {};
  text.split("\n").forEach((raw, index) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const match = /^([A-Za-z0-9_]+)\s*=\s*("(?:[^"\\]|\\.)*"|\d+)\s*(?:#.*)?$/.exec(line);
    if (!match) {
      throw new Error(`e2b.toml line ${index + 1} is not key = "value" or key = number: ${line}`);
    }
    const [, key, value] = match as unknown as [string, string, string];
    if (key in table) throw new Error(`e2b.toml sets "${key}" twice`);
    table[key] = value.startsWith('"') ? JSON.parse(value) as string : Number(value);
  });
  return table;
}

Deno.test("e2b.toml makes a template from Dockerfile.sandbox that starts Chronicle's replica", async () => {
  const toml = parseFlatToml(await Deno.readTextFile(join(ROOT, "e2b.toml")));
  assertEquals(Object.keys(toml).sort(), [
    "cpu_count",
    "dockerfile",
    "memory_mb",
    "ready_cmd",
    "start_cmd",
    "template_name",
  ]);
  strictEqual(toml.dockerfile, "Dockerfile.sandbox");
  strictEqual(toml.template_name, "chronicle-sandbox");
  ok(typeof toml.cpu_count === "number" && toml.cpu_count >= 1);
  ok(typeof toml.memory_mb === "number" && toml.memory_mb >= 512);
  const start = String(toml.start_cmd).split(" ");
  strictEqual(start[0], "/usr/local/bin/chronicle-e2b-start");
  strictEqual(start[1], "/workspace");
  strictEqual(start[start.indexOf("--data-dir") + 1], "/data");
  strictEqual(toml.ready_cmd, "test -e /tmp/chronicle-e2b.started");
  const dockerfile = await Deno.readTextFile(join(ROOT, "Dockerfile.sandbox"));
  ok(
    dockerfile.includes("COPY --chmod=0755 deploy/e2b-start.sh /usr/local/bin/chronicle-e2b-start"),
    "the image holds the start command",
  );
  const bases = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((match) => match[1]!);
  ok(bases.at(-1)!.startsWith("debian:"), "E2B needs a Debian runtime image");
  ok(dockerfile.includes("/etc/chronicle"), "the image has the env file's folder");
});

/** A stand-in for /usr/local/bin/chronicle-sandbox: the real entry point under `deno run`. */
async function sandboxWrapper(dir: string): Promise<string> {
  const path = join(dir, "chronicle-sandbox");
  const flags = binaryPermissions().join(" ");
  await Deno.writeTextFile(
    path,
    `#!/bin/sh\nexec "${Deno.execPath()}" run --quiet ${flags} "${
      join(ROOT, "bin/sandbox.ts")
    }" "$@"\n`,
  );
  await Deno.chmod(path, 0o755);
  return path;
}

Deno.test("the E2B start command waits for the agent's address, then runs the sandbox with it", async () => {
  await withTempDir(async (dir) => {
    const envFile = join(dir, "agent.env");
    const marker = join(dir, "started");
    const child = new Deno.Command("/bin/sh", {
      args: [join(ROOT, "deploy/e2b-start.sh"), "config", "--json"],
      env: {
        ...toolchainEnv(),
        CHRONICLE_ENV_FILE: envFile,
        CHRONICLE_E2B_MARKER: marker,
        CHRONICLE_BINARY: await sandboxWrapper(dir),
        CHRONICLE_ENV_POLL_SECONDS: "0.05",
        CHRONICLE_WORKSPACE: join(dir, "ws"),
      },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const output = child.output();
    await waitFor("the start marker", async () => {
      try {
        await Deno.stat(marker);
        return true;
      } catch {
        return false;
      }
    });
    // Written the way the script asks: a temp name in the same folder, then a rename.
    await Deno.writeTextFile(
      `${envFile}.tmp`,
      [
        "# from the orchestrator",
        'CHRONICLE_AGENT_URL="wss://agent.example:3002/sync"',
        "CHRONICLE_TOKEN='s3cret-token'",
        "PATH=/evil",
        "CHRONICLE_BAD-NAME=x",
        "CHRONICLE_HEARTBEAT_MS=250",
      ].join("\n"),
    );
    await Deno.rename(`${envFile}.tmp`, envFile);
    const { code, stdout, stderr } = await output;
    const errors = new TextDecoder().decode(stderr);
    strictEqual(code, 0, errors);
    ok(errors.includes(`waiting for ${envFile}`), errors);
    ok(errors.includes("ignoring a line of"), "a non-Chronicle variable is ignored");
    ok(errors.includes('ignoring "CHRONICLE_BAD-NAME"'), errors);
    const described = JSON.parse(new TextDecoder().decode(stdout));
    assertEquals(described.ws_connect, {
      value: "wss://agent.example:3002/sync",
      source: "env",
      name: "CHRONICLE_AGENT_URL",
    });
    assertEquals(described.token, { value: "****", source: "env", name: "CHRONICLE_TOKEN" });
    assertEquals(described.heartbeat_ms, {
      value: 250,
      source: "env",
      name: "CHRONICLE_HEARTBEAT_MS",
    });
  }, "chronicle-e2b-");
});

Deno.test("the E2B start command runs at once when the agent's address is already set", async () => {
  await withTempDir(async (dir) => {
    const { code, stdout, stderr } = await new Deno.Command("/bin/sh", {
      args: [join(ROOT, "deploy/e2b-start.sh"), "config", "--json"],
      env: {
        ...toolchainEnv(),
        CHRONICLE_ENV_FILE: join(dir, "never-written.env"),
        CHRONICLE_E2B_MARKER: join(dir, "started"),
        CHRONICLE_BINARY: await sandboxWrapper(dir),
        CHRONICLE_AGENT_URL: "ws://127.0.0.1:3002",
        CHRONICLE_WORKSPACE: join(dir, "ws"),
      },
      clearEnv: true,
    }).output();
    strictEqual(code, 0, new TextDecoder().decode(stderr));
    strictEqual(
      JSON.parse(new TextDecoder().decode(stdout)).ws_connect.value,
      "ws://127.0.0.1:3002",
    );
    await Deno.stat(join(dir, "started"));
  }, "chronicle-e2b-");
});
