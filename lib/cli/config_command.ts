import { describeConfig, resolveConfig } from "../config/mod.ts";
import type { Role } from "../config/mod.ts";
import { table } from "./output.ts";

/** Options for {@linkcode configCommand}. */
export interface ConfigCommandOptions {
  /** The binary's role, whose defaults apply. */
  role?: Role;
  /** Environment to read. @default {Deno.env.toObject()} */
  env?: Readonly<Record<string, string | undefined>>;
  /** Where the lines go. @default {console.log} */
  print?: (line: string) => void;
}

/**
 * `chronicle config [WORKSPACE|-C WORKSPACE] [options] [--json]`: prints the effective
 * configuration, one `key value (source)` line per option, secrets masked. It takes every
 * option `chronicle` takes, so it shows what that command line would run with.
 *
 * @param args Arguments after `config`.
 * @returns The exit status, 0.
 * @throws {UsageError} For an unknown option or a bad value.
 */
export function configCommand(args: string[], options: ConfigCommandOptions = {}): Promise<number> {
  const json = args.includes("--json");
  const config = resolveConfig({
    argv: args.filter((arg) => arg !== "--json"),
    env: options.env ?? Deno.env.toObject(),
    ...(options.role ? { role: options.role } : {}),
  });
  const described = describeConfig(config);
  const print = options.print ?? ((line: string) => console.log(line));
  if (json) {
    print(JSON.stringify(described, null, 2));
    return Promise.resolve(0);
  }
  const rows = Object.entries(described).map(([key, { value, source, name }]) => [
    key,
    value === null ? "-" : typeof value === "string" ? value : JSON.stringify(value),
    name === undefined ? `(${source})` : `(${source} ${name})`,
  ]);
  for (const line of table(rows)) print(line);
  return Promise.resolve(0);
}
