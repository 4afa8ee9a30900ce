/**
 * The command line: the command table every `chronicle COMMAND` is dispatched from (with
 * its help, the top-level help and the shell completions), and the errors that map to
 * exit codes (1 for a failure, 2 for bad usage).
 *
 * @module
 */
export { type Command, COMMANDS, type CommandSpec, findCommand } from "./commands.ts";
export { CliError, UsageError } from "./errors.ts";
export { unknownCommand } from "./help_command.ts";
export { type CommandTable, renderCommandHelp } from "./help.ts";
export { USAGE } from "./usage.ts";
export { BINARY_PERMISSIONS, BINARY_V8_FLAGS } from "./sync_commands.ts";
