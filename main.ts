/**
 * Chronicle's command line: parse, dispatch, and turn errors into exit codes.
 *
 * @module
 */
import {
  COMMANDS,
  findCommand,
  renderCommandHelp,
  unknownCommand,
  USAGE,
  UsageError,
} from "./lib/cli/mod.ts";
import { ConfigError, resolveConfig, type Role } from "./lib/config/mod.ts";
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
export async function main(args: string[], mainOptions: MainOptions = {}): Promise<number> {
  const [first, ...rest] = args;
  try {
    if (first === "--version" || first === "-V") {
      console.log(`chronicle ${VERSION}`);
      return 0;
    }
    if (first === "--help" || first === "-h") {
      console.log(USAGE);
      return 0;
    }
    const command = first === undefined ? undefined : findCommand(first);
    if (command !== undefined) {
      // `COMMAND --help` anywhere before a `--` is help, whatever else is given.
      const end = rest.indexOf("--");
      const options = end === -1 ? rest : rest.slice(0, end);
      if (options.includes("--help") || options.includes("-h")) {
        console.log(renderCommandHelp(first!, COMMANDS[first!]!));
        return 0;
      }
      return await command(rest, mainOptions.role);
    }
    if (args.includes("--help") || args.includes("-h")) {
      console.log(USAGE);
      return 0;
    }
    // A bare word is a workspace only when such a folder exists; otherwise a mistyped command.
    if (first !== undefined && !first.startsWith("-") && !first.includes("/") && !isFolder(first)) {
      throw unknownCommand(first, COMMANDS);
    }
    const config = resolveConfig({ argv: args, env: Deno.env.toObject(), ...mainOptions });
    return await runDaemon(config);
  } catch (error) {
    // The reader of our output went away (`chronicle ls | head`): nothing to tell anyone.
    if (error instanceof Deno.errors.BrokenPipe) return 0;
    // A configuration the command line gave wrong is bad usage too (lib/config has its own
    // error class: it sits below the CLI and cannot import it).
    if (error instanceof UsageError || error instanceof ConfigError) {
      console.error(error.message);
      console.error("Run chronicle --help for usage.");
      return 2;
    }
    if (error instanceof Deno.errors.NotCapable) {
      // Deno's own advice ("run again with the --allow-all flag") is wrong for Chronicle.
      const path = /"([^"]*)"/.exec(error.message)?.[1];
      console.error(
        `error: Chronicle has no permission to use "${path ?? "?"}" (a system path such as ` +
          "/proc, /sys or /dev): if you gave that path, choose another folder",
      );
      return 1;
    }
    console.error(`error: ${errorMessage(error)}`);
    return 1;
  }
}

function isFolder(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
