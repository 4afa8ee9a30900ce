import {
  describeConfig,
  type DescribedValue,
  OPTIONS,
  resolveConfig,
  type Role,
} from "../config/mod.ts";
import { resolveLayout } from "../workspace/mod.ts";
import { controlRequest, jsonOrFail } from "./control_client.ts";
import { formatBytes, formatDuration, table } from "./output.ts";

/** Options for {@linkcode configCommand}. */
export interface ConfigCommandOptions {
  /** The binary's role, whose defaults apply. */
  role?: Role;
  /** Environment to read. @default {Deno.env.toObject()} */
  env?: Readonly<Record<string, string | undefined>>;
  /** Where the lines go. @default {console.log} */
  print?: (line: string) => void;
  /** Where the note saying whose configuration this is goes with `--json`. @default {console.error} */
  note?: (line: string) => void;
}

/** `describeConfig`'s keys as the config file spells them (`heartbeat_ms`, `config_file`). */
function byFileKey(described: Record<string, DescribedValue>): Record<string, DescribedValue> {
  const out: Record<string, DescribedValue> = {};
  for (const [key, value] of Object.entries(described)) {
    const option = OPTIONS.find((o) => o.key === key);
    out[option ? option.file : key === "configFile" ? "config_file" : key] = value;
  }
  return out;
}

/**
 * `chronicle config [WORKSPACE|-C WORKSPACE] [options] [--json]`: the effective
 * configuration, one `key value (source)` line per option, keys as in the config file,
 * secrets masked. When Chronicle runs on that workspace, it is the running process's own
 * (asked over its control socket); otherwise what a start with these options would use.
 * The first line (on stderr with `--json`) says which.
 *
 * @param args Arguments after `config`.
 * @returns The exit status, 0.
 * @throws {UsageError} For an unknown option or a bad value.
 */
export async function configCommand(
  args: string[],
  options: ConfigCommandOptions = {},
): Promise<number> {
  const json = args.includes("--json");
  const config = resolveConfig({
    argv: args.filter((arg) => arg !== "--json"),
    env: options.env ?? Deno.env.toObject(),
    ...(options.role ? { role: options.role } : {}),
  });
  const layout = resolveLayout({
    root: config.workspace,
    dataDir: config.dataDir,
    database: config.database,
    casDir: config.casDir,
  });
  const live = await controlRequest(layout, "/config").catch(() => undefined);
  const running = live?.ok === true;
  const described = byFileKey(
    running ? await jsonOrFail<Record<string, DescribedValue>>(live!) : describeConfig(config),
  );
  const whose = running
    ? `the configuration of the Chronicle running on ${config.workspace}`
    : `no Chronicle runs on ${config.workspace}: what a start with these options would use`;
  const print = options.print ?? ((line: string) => console.log(line));
  if (json) {
    (options.note ?? ((line: string) => console.error(line)))(whose);
    print(JSON.stringify(described, null, 2));
    return 0;
  }
  print(`${whose}:`);
  const rows = Object.entries(described).map(([key, { value, source, name }]) => [
    key,
    forPeople(key, value),
    name === undefined ? `(${source})` : `(${source} ${name})`,
  ]);
  for (const line of table(rows)) print(line);
  return 0;
}

/** A value as people read it: sizes in KiB/MiB, mode bits in octal (`--json` keeps numbers). */
function forPeople(fileKey: string, value: unknown): string {
  if (value === null) return "-";
  if (typeof value === "string") return value;
  const kind = OPTIONS.find((option) => option.file === fileKey)?.kind;
  if (typeof value === "number") {
    if (kind === "size") return `${formatBytes(value)} (${value} bytes)`;
    if (kind === "octal") return `0${value.toString(8)}`;
    if (kind === "duration") return formatDuration(value);
  }
  return JSON.stringify(value);
}
