import { ok, rejects, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { CliError, UsageError } from "../../lib/cli/errors.ts";
import { healthCommand } from "../../lib/cli/health_command.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

/** Serves `answer` on DATA/control.sock while `fn` runs. */
function withControlSocket(
  answer: (path: string) => Response,
  fn: (data: string) => Promise<void>,
): Promise<void> {
  return withTempDir(async (data) => {
    const server = Deno.serve(
      { path: join(data, "control.sock"), transport: "unix", onListen() {} },
      (request) => answer(new URL(request.url).pathname),
    );
    try {
      await fn(data);
    } finally {
      await server.shutdown();
    }
  }, "chronicle-health-");
}

const failsWith = (message: string) => (error: unknown) => {
  ok(error instanceof CliError, String(error));
  ok(error.message.includes(message), error.message);
  return true;
};

Deno.test("healthCommand() exits 0 only for a healthy (or ready) answer on the control socket", async (t) => {
  await withControlSocket(
    (path) =>
      path === "/health"
        ? Response.json({ status: "ok", role: "master" })
        : Response.json({ ready: false }, { status: 503 }),
    async (data) => {
      await t.step("healthy", async () => {
        strictEqual(await healthCommand(["--data-dir", data, "--quiet"], { env: {} }), 0);
      });
      await t.step("found through CHRONICLE_DATA_DIR", async () => {
        strictEqual(await healthCommand(["--quiet"], { env: { CHRONICLE_DATA_DIR: data } }), 0);
      });
      await t.step("not ready", async () => {
        await rejects(
          healthCommand(["--data-dir", data, "--ready"], { env: {} }),
          failsWith('is not ready: HTTP 503 {"ready":false}'),
        );
      });
    },
  );
  await withControlSocket(
    () => Response.json({ status: "degraded" }, { status: 500 }),
    async (data) => {
      await t.step("unhealthy", async () => {
        await rejects(
          healthCommand(["--data-dir", data], { env: {} }),
          failsWith("is not healthy: HTTP 500"),
        );
      });
    },
  );
});

Deno.test("healthCommand() says plainly when nothing answers, and checks its arguments", async () => {
  await withTempDir(async (data) => {
    await rejects(
      healthCommand(["-C", join(data, "ws")], { env: {} }),
      failsWith(`No Chronicle answers on "${join(data, "ws", ".chronicle", "control.sock")}"`),
    );
    await rejects(healthCommand(["--timeout-ms", "0"], { env: {} }), UsageError);
    await rejects(healthCommand(["--timeout-ms", "soon"], { env: {} }), UsageError);
    await rejects(healthCommand(["extra"], { env: {} }), UsageError);
  }, "chronicle-health-");
});
