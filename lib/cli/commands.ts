import { configCommand } from "./config_command.ts";
import {
  catCommand,
  historyCommand,
  logCommand,
  lsCommand,
  restoreCommand,
  statusCommand,
} from "./history_commands.ts";
import { snapshotCommands } from "./snapshot_commands.ts";
import { wireCommand } from "./wire_command.ts";

/** A subcommand: its arguments in, its exit code out. */
export type Command = (args: string[]) => Promise<number>;

/** Every `chronicle COMMAND`, by name. */
export const COMMANDS: Record<string, Command> = {
  ls: lsCommand,
  history: historyCommand,
  cat: catCommand,
  log: logCommand,
  restore: restoreCommand,
  status: statusCommand,
  config: configCommand,
  wire: (args) => wireCommand(args),
  ...snapshotCommands,
};
