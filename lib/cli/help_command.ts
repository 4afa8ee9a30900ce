import { renderCompletion, type Shell, SHELLS } from "./completions.ts";
import { UsageError } from "./errors.ts";
import { type CommandTable, renderCommandHelp, renderTopHelp } from "./help.ts";
import { println } from "./output.ts";
import { nearestWord } from "./suggest.ts";

/**
 * The error for a word that is no command: `Unknown command "stauts": did you mean "status"?`.
 *
 * @param word What was typed.
 * @param commands The command table.
 * @returns A usage error (exit 2).
 */
export function unknownCommand(word: string, commands: CommandTable): UsageError {
  const near = nearestWord(word, Object.keys(commands));
  return new UsageError(
    near === undefined
      ? `Unknown command "${word}" (and no folder of that name to run on): see chronicle --help`
      : `Unknown command "${word}": did you mean "${near}"?`,
  );
}

/**
 * `chronicle help [COMMAND]`: the top-level help, or one command's.
 *
 * @param args The arguments after `help`.
 * @param commands The command table.
 * @returns 0.
 * @throws {UsageError} For an unknown command.
 */
export function helpCommand(args: string[], commands: CommandTable): Promise<number> {
  const [name, extra] = args.filter((arg) => arg !== "--help" && arg !== "-h");
  if (extra !== undefined) throw new UsageError("Usage: chronicle help [COMMAND]");
  if (name === undefined) println(renderTopHelp(commands));
  else if (Object.hasOwn(commands, name)) println(renderCommandHelp(name, commands[name]!));
  else throw unknownCommand(name, commands);
  return Promise.resolve(0);
}

/**
 * `chronicle completions bash|zsh|fish`: prints the completion script for that shell.
 *
 * @param args The arguments after `completions`.
 * @param commands The command table.
 * @returns 0.
 * @throws {UsageError} For a missing or unknown shell.
 */
export function completionsCommand(args: string[], commands: CommandTable): Promise<number> {
  const [shell, extra] = args;
  if (
    shell === undefined || extra !== undefined || !(SHELLS as readonly string[]).includes(shell)
  ) {
    throw new UsageError(
      `Usage: chronicle completions ${SHELLS.join("|")}${
        shell === undefined ? "" : ` (got "${shell}")`
      }`,
    );
  }
  Deno.stdout.writeSync(new TextEncoder().encode(renderCompletion(shell as Shell, commands)));
  return Promise.resolve(0);
}
