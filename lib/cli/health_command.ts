import { resolveLayout } from "../workspace/mod.ts";
import { CliError, UsageError } from "./errors.ts";
import { nonEmpty } from "./non_empty.ts";
import { println } from "./output.ts";
import { parseCommandArgs } from "./parse_command_args.ts";
import { errorMessage } from "../log/mod.ts";

/** Options for {@linkcode healthCommand}. */
export interface HealthCommandOptions {
  /** Environment to read. @default {Deno.env.toObject()} */
  env?: Readonly<Record<string, string | undefined>>;
}

/**
 * `chronicle health [-C WS | --data-dir D] [--ready] [--timeout-ms N] [--quiet]`: asks
 * the Chronicle running on a workspace for `GET /health` (or `GET /ready`) over its
 * control socket, `DATA/control.sock`, and exits 0 when it answers healthy (or ready),
 * else 1. Made for container health checks, which need no shell or curl. The data folder
 * is `--data-dir`, else `-C WS/.chronicle`, else `CHRONICLE_DATA_DIR`, else
 * `CHRONICLE_WORKSPACE/.chronicle`, else `./.chronicle`. With `--quiet` it prints nothing
 * at all, for `until chronicle health --ready -q; do sleep 0.2; done`: not running, not
 * healthy and not ready are its exit status alone (bad arguments are still reported).
 *
 * @param args Arguments after `health`.
 * @returns 0 when healthy (or ready); 1 with `--quiet` when not (or nothing answers).
 * @throws {UsageError} For bad arguments.
 * @throws {CliError} Without `--quiet`, when nothing answers, or the answer is not healthy
 * (or not ready).
 */
export async function healthCommand(
  args: string[],
  options: HealthCommandOptions = {},
): Promise<number> {
  const { values, positionals } = parseCommandArgs("health", args, {
    C: { type: "string" },
    "data-dir": { type: "string" },
    ready: { type: "boolean" },
    "timeout-ms": { type: "string" },
    quiet: { type: "boolean", short: "q" },
  });
  if (positionals.length > 0) {
    throw new UsageError(`chronicle health takes no arguments, got "${positionals[0]}"`);
  }
  const timeoutText = values["timeout-ms"] ?? "3000";
  const timeoutMs = Number(timeoutText);
  if (!/^\d+$/.test(timeoutText) || timeoutMs < 1 || timeoutMs > 600_000) {
    throw new UsageError(`Invalid --timeout-ms "${timeoutText}": expected 1 to 600000`);
  }
  const env = options.env ?? Deno.env.toObject();
  const socket = controlSocketOf(values, env);
  const route = values.ready ? "/ready" : "/health";

  const client = Deno.createHttpClient({ proxy: { transport: "unix", path: socket } });
  let status: number;
  let body: Record<string, unknown>;
  try {
    const response = await fetch(`http://chronicle${route}`, {
      client,
      signal: AbortSignal.timeout(timeoutMs),
    });
    status = response.status;
    body = await response.json().catch(() => ({}));
  } catch (error) {
    // --quiet is for polling loops: "not running yet" is the exit status alone.
    if (values.quiet) return 1;
    const reason = error instanceof DOMException && error.name === "TimeoutError"
      ? `no answer within ${timeoutMs} ms`
      : errorMessage(error);
    throw new CliError(`No Chronicle answers on "${socket}": ${reason}`);
  } finally {
    client.close();
  }
  const healthy = values.ready
    ? status === 200 && body.ready === true
    : status === 200 && body.status === "ok";
  if (!healthy) {
    if (values.quiet) return 1;
    throw new CliError(
      typeof body.waiting_for === "string"
        ? `Chronicle on "${socket}" is not ready yet: it waits for ${body.waiting_for}`
        : `Chronicle on "${socket}" is not ${values.ready ? "ready" : "healthy"}: HTTP ${status} ${
          JSON.stringify(body)
        }`,
    );
  }
  if (!values.quiet) println(JSON.stringify(body));
  return 0;
}

/**
 * The control socket of `--data-dir`, else of `-C WS`'s default data folder, else of
 * `CHRONICLE_DATA_DIR`, else of `CHRONICLE_WORKSPACE`'s (or the current folder's).
 */
function controlSocketOf(
  values: { C?: string | undefined; "data-dir"?: string | undefined },
  env: Readonly<Record<string, string | undefined>>,
): string {
  const root = values.C ?? nonEmpty(env.CHRONICLE_WORKSPACE) ?? ".";
  // -C names the workspace, whose own data folder then wins over CHRONICLE_DATA_DIR.
  const envDataDir = values.C === undefined ? nonEmpty(env.CHRONICLE_DATA_DIR) : undefined;
  return resolveLayout({ root, dataDir: values["data-dir"] ?? envDataDir }).controlSocket;
}
