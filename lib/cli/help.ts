import { CONFIG_FLAG, OPTION_HELP, OPTIONS, type OptionSpec } from "../config/mod.ts";
import { type CommandSpec, JSON_HELP, LOCATE_HELP } from "./command_spec.ts";

/** The table of commands help is made from, by name. */
export type CommandTable = Readonly<Record<string, CommandSpec>>;

/** Width of the first column in help listings. */
const COLUMN = 30;

function rows(entries: readonly (readonly [string, string])[], column = COLUMN): string[] {
  const indent = "  ";
  return entries.map(([left, right]) =>
    left.length > column
      ? `${indent}${left}\n${indent}${" ".repeat(column)}  ${right}`
      : `${indent}${left.padEnd(column)}  ${right}`
  );
}

/** How one configuration option is spelled in help: `-C, --workspace DIR`. */
export function optionSpelling(option: Pick<OptionSpec, "flag" | "short">): string {
  const value = OPTION_HELP[option.flag]?.value;
  const long = `--${option.flag}${value ? ` ${value}` : ""}`;
  return option.short ? `-${option.short}, ${long}` : long;
}

/**
 * The text `chronicle --help` prints: how to run, every configuration option of the options
 * table, and every command of the command table.
 *
 * @param commands The command table.
 * @returns The help text.
 */
export function renderTopHelp(commands: CommandTable): string {
  const options = OPTIONS.map((option) =>
    [
      optionSpelling(option),
      OPTION_HELP[option.flag]?.help ?? "",
    ] as const
  );
  options.push([
    `--${CONFIG_FLAG} FILE`,
    "config file (default DATA/config.yaml; or CHRONICLE_CONFIG)",
  ]);
  options.push(["-V, --version", "print the version"], ["-h, --help", "this help"]);
  const listed = Object.entries(commands).map(([name, spec]) => [name, spec.summary] as const);
  return [
    "chronicle: a versioned, replicated workspace filesystem for AI agents",
    "",
    "Usage:",
    "  chronicle [WORKSPACE] [options]   run on WORKSPACE (default: .) until SIGINT/SIGTERM or stop",
    "  chronicle COMMAND [args]          read or act on a workspace (chronicle help COMMAND)",
    "",
    "Options (each also CHRONICLE_<NAME> in the environment and a snake_case key in the",
    "config file; flags win, then the environment, then the file):",
    ...rows(options),
    "",
    "Commands:",
    ...rows(listed, Math.max(...listed.map(([name]) => name.length))),
    "",
    "Each command finds the workspace from the current folder upwards, or takes -C WORKSPACE.",
    "--json output uses snake_case keys and UTC times; people's output uses local times.",
    "Exit status: 0 success, 1 failure (one line on stderr), 2 bad usage.",
  ].join("\n");
}

/**
 * The text `chronicle help COMMAND` and `chronicle COMMAND --help` print.
 *
 * @param name The command's name.
 * @param spec Its row of the command table.
 * @returns The help text.
 */
export function renderCommandHelp(name: string, spec: CommandSpec): string {
  const options = [...(spec.options ?? [])];
  if (spec.locate) options.push(...LOCATE_HELP);
  if (spec.json) options.push(JSON_HELP);
  options.push(["-h, --help", "this help"]);
  return [
    `chronicle ${name}: ${spec.summary}`,
    "",
    "Usage:",
    ...spec.usage.map((line) => `  chronicle ${line}`),
    ...(spec.details ? ["", spec.details] : []),
    "",
    "Options:",
    ...rows(options),
  ].join("\n");
}

/**
 * The flags a command takes, as completions offer them (`--at`, `-C`, `--json`, `--help`).
 *
 * @param spec A row of the command table.
 * @returns The flags, without duplicates.
 */
export function commandFlags(spec: CommandSpec): string[] {
  const spellings = [...(spec.options ?? []).map(([spelling]) => spelling)];
  if (spec.locate) spellings.push(...LOCATE_HELP.map(([spelling]) => spelling));
  if (spec.json) spellings.push(JSON_HELP[0]);
  spellings.push("--help");
  const flags = new Set<string>();
  for (const spelling of spellings) {
    for (const match of spelling.matchAll(/(?:^|[\s,])(--?[A-Za-z][\w-]*)/g)) flags.add(match[1]!);
  }
  return [...flags];
}

/** The daemon's flags, as completions offer them. */
export function daemonFlags(): string[] {
  const flags = OPTIONS.flatMap((option) => [
    `--${option.flag}`,
    ...(option.short ? [`-${option.short}`] : []),
  ]);
  return [...flags, `--${CONFIG_FLAG}`, "--version", "--help"];
}
