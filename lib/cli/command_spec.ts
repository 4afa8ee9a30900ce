import type { Role } from "../config/mod.ts";

/** A subcommand: its arguments in (and the binary's role, if any), its exit code out. */
export type Command = (args: string[], role?: Role) => Promise<number>;

/**
 * One row of the command table (`COMMANDS` in `commands.ts`): everything `chronicle help
 * COMMAND`, `COMMAND --help`, the top-level help and the shell completions show, and the
 * function that runs it. The table's key is the command's name.
 *
 * @example A row
 * ```ts
 * import type { CommandSpec } from "./command_spec.ts";
 * const row: CommandSpec = {
 *   summary: "content of PATH at iteration N (default latest)",
 *   usage: ["cat PATH [--at N]"],
 *   options: [["--at N", "the iteration to print"]],
 *   locate: true,
 *   run: () => Promise.resolve(0),
 * };
 * ```
 */
export interface CommandSpec {
  /** One line for the top-level help: lower case, no final period. */
  summary: string;
  /** Usage lines without the leading `chronicle `, e.g. `"cat PATH [--at N]"`. */
  usage: readonly string[];
  /** Paragraphs `help COMMAND` prints after the usage, if any. */
  details?: string;
  /**
   * The command's own options as `[spelling, meaning]`, e.g. `["--at N", "the iteration"]`;
   * the first `--word` (and `-x`) of each spelling is what completions offer.
   */
  options?: readonly (readonly [string, string])[];
  /** Words that may follow the command (`txn begin|commit|rollback`), for completions. */
  subcommands?: readonly string[];
  /** Takes `-C WORKSPACE`, `--data-dir`, `--database`, `--cas-dir` to find the workspace. @default {false} */
  locate?: boolean;
  /** Takes `--json` for machine output (snake_case keys, UTC times). @default {false} */
  json?: boolean;
  /** Runs the command. */
  run: Command;
}

/** The location options {@linkcode CommandSpec.locate} adds, as help rows. */
export const LOCATE_HELP: readonly (readonly [string, string])[] = [
  ["-C WORKSPACE", "the workspace (default: found from the current folder upwards)"],
  ["--data-dir DIR", "the data folder (default WORKSPACE/.chronicle)"],
  ["--database FILE, --cas-dir DIR", "the store's parts, when placed apart"],
];

/** The help row {@linkcode CommandSpec.json} adds. */
export const JSON_HELP: readonly [string, string] = [
  "--json",
  "machine output: snake_case keys, times in UTC (ISO 8601)",
];
