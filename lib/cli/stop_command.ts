import { processLockHeld } from "../daemon/mod.ts";
import { controlRequest, jsonOrFail } from "./control_client.ts";
import { CliError } from "./errors.ts";
import { LOCATE_ARGS, locateWorkspace } from "./locate_workspace.ts";
import { printJson, println } from "./output.ts";
import { parseCommandArgs } from "./parse_command_args.ts";
import { UsageError } from "./errors.ts";

/** How long `stop` waits for the process to end by default. */
const STOP_TIMEOUT_S = 30;

/**
 * `chronicle stop [--timeout SECONDS] [--json]`: asks the Chronicle running on the workspace
 * to shut down cleanly (`POST /shutdown` on its control socket, as SIGTERM would) and waits
 * until its process is gone. Says so plainly, exit 0, when none runs.
 *
 * @param args The arguments after `stop`.
 * @returns 0 once stopped (or when none ran).
 * @throws {CliError} When the process is still there after the timeout.
 */
export async function stopCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("stop", args, {
    ...LOCATE_ARGS,
    json: { type: "boolean" },
    timeout: { type: "string" },
  });
  if (positionals.length > 0) {
    throw new UsageError(`chronicle stop takes no arguments, got "${positionals[0]}"`);
  }
  const timeoutS = values.timeout === undefined ? STOP_TIMEOUT_S : Number(values.timeout);
  if (!(timeoutS > 0 && timeoutS <= 3600)) {
    throw new UsageError(`Invalid --timeout "${values.timeout}": expected 1 to 3600 seconds`);
  }
  const env = Deno.env.toObject();
  const flagged = values.C ?? values["data-dir"] ?? values.database;
  const layout = locateWorkspace({
    workspace: values.C ??
      (flagged === undefined ? env.CHRONICLE_WORKSPACE || undefined : undefined),
    dataDir: values["data-dir"] ??
      (flagged === undefined ? env.CHRONICLE_DATA_DIR || undefined : undefined),
    database: values.database,
    casDir: values["cas-dir"],
  });
  const status = await controlRequest(layout, "/status");
  if (!status) {
    if (values.json) printJson({ workspace: layout.root, running: false, stopped: false });
    else println(`No Chronicle is running on ${layout.root}`);
    return 0;
  }
  const pid = Number((await jsonOrFail<{ pid?: number }>(status)).pid);
  await jsonOrFail(await controlRequest(layout, "/shutdown", { method: "POST" }) ?? stopped());
  const deadline = Date.now() + timeoutS * 1000;
  while (Date.now() < deadline) {
    const answering = await controlRequest(layout, "/health").catch(() => undefined);
    if (!answering && !processLockHeld(layout.dataDir)) {
      if (values.json) printJson({ workspace: layout.root, running: false, stopped: true, pid });
      else println(`stopped Chronicle on ${layout.root} (pid ${pid})`);
      return 0;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new CliError(
    `Chronicle on "${layout.root}" (pid ${pid}) is still running after ${timeoutS} s; see its log, or send it SIGTERM`,
  );
}

/** The process went away between the status and the shutdown request: that is a stop. */
function stopped(): Response {
  return Response.json({ stopping: true }, { status: 202 });
}
