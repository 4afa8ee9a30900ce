/**
 * Runs the snapshot commands on their own, with `main.ts`'s error handling, for CLI tests
 * that need a real child process: `deno run -A _cli_main.ts COMMAND ARGS...` where COMMAND
 * is a snapshot command or `restore`.
 *
 * @module
 */
import { restoreToCommand, snapshotCommands } from "../../lib/cli/snapshot_commands.ts";
import { UsageError } from "../../lib/cli/errors.ts";
import { errorMessage } from "../../lib/log/mod.ts";

const [name, ...args] = Deno.args;
const command = name === "restore" ? restoreToCommand : snapshotCommands[name ?? ""];
let code: number;
try {
  if (!command) throw new UsageError(`Unknown command "${name}"`);
  code = await command(args);
} catch (error) {
  if (error instanceof UsageError) {
    console.error(error.message);
    code = 2;
  } else {
    console.error(`error: ${errorMessage(error)}`);
    code = 1;
  }
}
Deno.exit(code);
