/**
 * Chronicle's command line: parse, dispatch, and turn errors into exit codes.
 *
 * @module
 */
import { COMMANDS } from "./lib/cli/commands.ts";
import { UsageError } from "./lib/cli/errors.ts";
import { USAGE } from "./lib/cli/usage.ts";
import { resolveConfig, type Role } from "./lib/config/mod.ts";
import { runDaemon, VERSION } from "./lib/daemon/mod.ts";
import { errorMessage } from "./lib/log/mod.ts";

/** Options for {@linkcode main}. */
export interface MainOptions {
  /** The role a compiled binary plays, which changes a few defaults. */
  role?: Role;
}

/**
 * Runs Chronicle with command-line `args`.
 *
 * @returns The exit code: 0 success, 1 failure (one line on stderr), 2 bad usage.
 */
export async function main(args: string[], options: MainOptions = {}): Promise<number> {
  const [first, ...rest] = args;
  try {
    if (first === "--version" || first === "-V") {
      console.log(`chronicle ${VERSION}`);
      return 0;
    }
    if (first === "--help" || first === "-h" || first === "help") {
      console.log(USAGE);
      return 0;
    }
    if (first !== undefined && Object.hasOwn(COMMANDS, first)) {
      return await COMMANDS[first]!(rest, options.role);
    }
    const config = resolveConfig({ argv: args, env: Deno.env.toObject(), ...options });
    return await runDaemon(config);
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(error.message);
      console.error("Run chronicle --help for usage.");
      return 2;
    }
    console.error(`error: ${errorMessage(error)}`);
    return 1;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
