/**
 * Agent and sandbox binaries syncing over WebSocket with a token, under `deno run` with
 * exactly the compiled binaries' permissions: the setup a container pair runs.
 */
import { ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { binaryCommand, Running } from "./_deploy.ts";
import { freePort } from "../_helpers/processes.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import { readText, withTempDir } from "../_helpers/temp_dir.ts";

function start(role: "agent" | "sandbox", args: string[], env: Record<string, string>): Running {
  return new Running(binaryCommand(role, args, env));
}

Deno.test({
  name: "agent and sandbox binaries sync over WebSocket, and a SIGTERM mid-sync loses nothing",
  fn: () =>
    withTempDir(async (dir) => {
      const agentWs = join(dir, "agent");
      const sandboxWs = join(dir, "sandbox");
      await Deno.mkdir(agentWs);
      await Deno.mkdir(sandboxWs);
      const port = freePort();
      const token = "sync-t0ken";
      const agent = start("agent", [agentWs, "--ws-listen", `127.0.0.1:${port}`], {
        CHRONICLE_DATA_DIR: join(dir, "agent-data"),
        CHRONICLE_TOKEN: token,
      });
      const sandboxEnv = {
        CHRONICLE_DATA_DIR: join(dir, "sandbox-data"),
        CHRONICLE_AGENT_URL: `ws://127.0.0.1:${port}`,
        CHRONICLE_TOKEN: token,
      };
      let sandbox = start("sandbox", [sandboxWs], sandboxEnv);
      try {
        await Deno.writeTextFile(join(agentWs, "from-agent.txt"), "agent wrote this");
        await waitFor(
          "the agent's file in the sandbox",
          async () => (await readText(join(sandboxWs, "from-agent.txt"))) === "agent wrote this",
        );

        const FILES = 100;
        await Deno.mkdir(join(sandboxWs, "burst"));
        let stopped: Promise<number> | undefined;
        for (let n = 0; n < FILES; n++) {
          await Deno.writeTextFile(join(sandboxWs, "burst", `${n}.txt`), `sandbox ${n}`);
          if (n === FILES / 2) stopped = sandbox.stop();
        }
        strictEqual(await stopped, 0, sandbox.stderr);
        await Deno.writeTextFile(
          join(agentWs, "while-away.txt"),
          "written while the sandbox was down",
        );
        sandbox = start("sandbox", [sandboxWs], sandboxEnv);
        await waitFor("every sandbox file at the agent", async () => {
          for (let n = 0; n < FILES; n++) {
            if ((await readText(join(agentWs, "burst", `${n}.txt`))) !== `sandbox ${n}`) {
              return false;
            }
          }
          return true;
        });
        await waitFor(
          "the agent's file written while the sandbox was down",
          async () =>
            (await readText(join(sandboxWs, "while-away.txt"))) ===
              "written while the sandbox was down",
        );
      } finally {
        const codes = [await sandbox.stop(), await agent.stop()];
        ok(
          codes.every((code) => code === 0),
          `exit codes ${codes}: ${sandbox.stderr}\n${agent.stderr}`,
        );
      }
    }, "chronicle-sync-bin-"),
});
