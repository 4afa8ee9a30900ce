import { commandFlags, type CommandTable, daemonFlags } from "./help.ts";

/** The shells `chronicle completions SHELL` writes a script for. */
export const SHELLS = ["bash", "zsh", "fish"] as const;
/** One of {@linkcode SHELLS}. */
export type Shell = typeof SHELLS[number];

/** A word as a single-quoted shell string. */
function quote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The completion script for a shell, made from the command table: command names with their
 * summaries, each command's subcommands and flags, the daemon's options, and file names.
 *
 * @param shell `bash`, `zsh` or `fish`.
 * @param commands The command table.
 * @returns The script, to be sourced by the shell.
 *
 * @example Bash
 * ```sh
 * source <(chronicle completions bash)
 * ```
 */
export function renderCompletion(shell: Shell, commands: CommandTable): string {
  const names = Object.keys(commands);
  switch (shell) {
    case "bash":
      return bash(commands, names);
    case "zsh":
      return zsh(commands, names);
    case "fish":
      return fish(commands, names);
  }
}

function bash(commands: CommandTable, names: string[]): string {
  const cases = names.map((name) => {
    const spec = commands[name]!;
    return `    ${name}) flags=${quote(commandFlags(spec).join(" "))}; subs=${
      quote((spec.subcommands ?? []).join(" "))
    } ;;`;
  });
  return [
    "# bash completion for chronicle: source <(chronicle completions bash)",
    "_chronicle() {",
    '  local cur="${COMP_WORDS[COMP_CWORD]}" flags subs',
    `  local commands=${quote(names.join(" "))}`,
    `  local daemon=${quote(daemonFlags().join(" "))}`,
    '  if [ "$COMP_CWORD" -eq 1 ]; then',
    '    if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "$daemon" -- "$cur"))',
    '    else COMPREPLY=($(compgen -W "$commands" -- "$cur") $(compgen -d -- "$cur")); fi',
    "    return 0",
    "  fi",
    '  case "${COMP_WORDS[1]}" in',
    ...cases,
    '    *) flags="$daemon"; subs="" ;;',
    "  esac",
    '  if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "$flags" -- "$cur"))',
    '  elif [ "$COMP_CWORD" -eq 2 ] && [ -n "$subs" ]; then COMPREPLY=($(compgen -W "$subs" -- "$cur"))',
    '  else COMPREPLY=($(compgen -f -- "$cur")); fi',
    "}",
    "complete -o filenames -F _chronicle chronicle",
    "",
  ].join("\n");
}

function zsh(commands: CommandTable, names: string[]): string {
  const described = names.map((name) =>
    `    ${quote(`${name}:${commands[name]!.summary.replaceAll(":", "\\:")}`)}`
  );
  const cases = names.map((name) => {
    const spec = commands[name]!;
    const words = [...(spec.subcommands ?? []), ...commandFlags(spec)];
    return `      ${name}) compadd -- ${words.map(quote).join(" ")}; _files ;;`;
  });
  return [
    "#compdef chronicle",
    "# zsh completion for chronicle: chronicle completions zsh > ~/.zfunc/_chronicle",
    "_chronicle() {",
    "  local -a commands",
    "  commands=(",
    ...described,
    "  )",
    "  if (( CURRENT == 2 )); then",
    "    _describe 'command' commands",
    `    compadd -- ${daemonFlags().map(quote).join(" ")}`,
    "    _files -/",
    "  else",
    "    case $words[2] in",
    ...cases,
    `      *) compadd -- ${daemonFlags().map(quote).join(" ")}; _files ;;`,
    "    esac",
    "  fi",
    "}",
    'if [ "$funcstack[1]" = "_chronicle" ]; then _chronicle "$@"; else compdef _chronicle chronicle; fi',
    "",
  ].join("\n");
}

function fish(commands: CommandTable, names: string[]): string {
  const lines = [
    "# fish completion for chronicle: chronicle completions fish > ~/.config/fish/completions/chronicle.fish",
    "complete -c chronicle -f",
  ];
  for (const name of names) {
    const spec = commands[name]!;
    lines.push(
      `complete -c chronicle -n __fish_use_subcommand -a ${quote(name)} -d ${quote(spec.summary)}`,
    );
    const when = quote(`__fish_seen_subcommand_from ${name}`);
    for (const sub of spec.subcommands ?? []) {
      lines.push(`complete -c chronicle -n ${when} -a ${quote(sub)}`);
    }
    for (const flag of commandFlags(spec)) {
      const option = flag.startsWith("--")
        ? `-l ${quote(flag.slice(2))}`
        : `-s ${quote(flag.slice(1))}`;
      lines.push(`complete -c chronicle -n ${when} ${option}`);
    }
    lines.push(`complete -c chronicle -n ${when} -F`);
  }
  for (const flag of daemonFlags()) {
    const option = flag.startsWith("--")
      ? `-l ${quote(flag.slice(2))}`
      : `-s ${quote(flag.slice(1))}`;
    lines.push(`complete -c chronicle -n __fish_use_subcommand ${option}`);
  }
  return lines.join("\n") + "\n";
}
