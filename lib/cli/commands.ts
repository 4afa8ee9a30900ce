import type { Role } from "../config/mod.ts";
import { checkpointCommand, rehydrateCommand } from "./checkpoint_commands.ts";
import { configCommand } from "./config_command.ts";
import { healthCommand } from "./health_command.ts";
import { mcpCommand } from "./mcp_command.ts";
import {
  catCommand,
  historyCommand,
  logCommand,
  lsCommand,
  restoreCommand,
  statusCommand,
} from "./history_commands.ts";
import { conflictsCommand } from "./replication_commands.ts";
import { snapshotCommands } from "./snapshot_commands.ts";
import { syncCommand } from "./sync_commands.ts";
import { watchCommand } from "./watch_command.ts";
import { uiCommand } from "./ui_command.ts";
import { wireCommand } from "./wire_command.ts";

/** A subcommand: its arguments in (and the binary's role, if any), its exit code out. */
export type Command = (args: string[], role?: Role) => Promise<number>;

/** Every `chronicle COMMAND`, by name. */
export const COMMANDS: Record<string, Command> = {
  ls: lsCommand,
  history: historyCommand,
  cat: catCommand,
  log: logCommand,
  restore: restoreCommand,
  status: statusCommand,
  config: (args, role) => configCommand(args, role ? { role } : {}),
  health: (args) => healthCommand(args),
  checkpoint: checkpointCommand,
  rehydrate: rehydrateCommand,
  wire: (args) => wireCommand(args),
  conflicts: conflictsCommand,
  sync: syncCommand,
  mcp: mcpCommand,
  ui: uiCommand,
  ...snapshotCommands,
  // cli-history: `diff` is snapshotCommands.diff (DIFF_USAGE in diff_command.ts: PATH --from N, or ID [--patch]).
  watch: watchCommand, // WATCH_USAGE in watch_command.ts
};
