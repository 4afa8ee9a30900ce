/**
 * Where configuration values come from, read raw: command-line flags, `CHRONICLE_*`
 * environment variables and a `config.yaml`. {@linkcode resolveConfig} ranks and checks them.
 *
 * @module
 */
import { dirname, resolve } from "node:path";
import { parseArgs, type ParseArgsOptionsConfig } from "node:util";
import { parse as parseYaml } from "yaml";
import { errorMessage } from "../log/mod.ts";
import { ConfigError } from "./errors.ts";
import { CONFIG_FLAG, OPTIONS } from "./_options.ts";
import type { RawValue } from "./_parse_value.ts";
import type { ConfigKey, Role } from "./types.ts";

export function readFlags(
  argv: readonly string[],
  cwd: string,
): { flags: Map<ConfigKey, RawValue>; explicitConfig: string | undefined } {
  const parserOptions: ParseArgsOptionsConfig = { [CONFIG_FLAG]: { type: "string" } };
  for (const option of OPTIONS) {
    parserOptions[option.flag] = {
      type: option.kind === "boolean" ? "boolean" : "string",
      ...(option.kind === "list" ? { multiple: true } : {}),
      ...(option.short ? { short: option.short } : {}),
    };
  }
  let parsed;
  try {
    parsed = parseArgs({
      args: joinNegativeNumbers(argv),
      options: parserOptions,
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    throw usageFromParseArgs(error);
  }
  const values = parsed.values as Record<string, string | boolean | string[] | undefined>;
  const flags = new Map<ConfigKey, RawValue>();
  for (const option of OPTIONS) {
    const value = values[option.flag];
    if (value === undefined) continue;
    flags.set(option.key, { value, where: `--${option.flag}`, baseDir: cwd, fromFile: false });
  }
  if (parsed.positionals.length > 1) {
    throw new ConfigError(
      `Expected one workspace, got ${parsed.positionals.length}: ${
        parsed.positionals.map((p) => `"${p}"`).join(", ")
      }`,
    );
  }
  const positional = parsed.positionals[0];
  if (positional !== undefined) {
    if (flags.has("workspace")) {
      throw new ConfigError(
        `Give the workspace once: "${positional}" and -C "${values.workspace}"`,
      );
    }
    flags.set("workspace", {
      value: positional,
      where: "WORKSPACE",
      baseDir: cwd,
      fromFile: false,
    });
  }
  const config = values[CONFIG_FLAG];
  if (config === "") throw new ConfigError(`Invalid value "" for --config: expected a file`);
  return { flags, explicitConfig: typeof config === "string" ? resolve(cwd, config) : undefined };
}

/**
 * `--heartbeat-ms -5` as `--heartbeat-ms=-5`, so a negative number reaches the value check
 * ("must be a whole number from 10…") instead of reading as a missing value. Only for
 * options that take a number, and only before a `--`.
 */
function joinNegativeNumbers(argv: readonly string[]): string[] {
  const numeric = new Set(
    OPTIONS.filter((o) => o.kind === "integer" || o.kind === "size").map((o) => `--${o.flag}`),
  );
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      out.push(...argv.slice(i));
      break;
    }
    const next = argv[i + 1];
    if (numeric.has(arg) && next !== undefined && /^-\d/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

function usageFromParseArgs(error: unknown): ConfigError {
  const message = errorMessage(error);
  const code = (error as { code?: string }).code;
  const name = /'([^' ]+)/.exec(message)?.[1] ?? "";
  switch (code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return new ConfigError(`Unknown option "${name}"`);
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      if (message.includes("does not take an argument")) {
        return new ConfigError(`Option "${name}" takes no value`);
      }
      return new ConfigError(`Option "${name}" needs a value`);
    default:
      return new ConfigError(message.split("\n")[0]!);
  }
}

export function readEnv(
  env: Readonly<Record<string, string | undefined>>,
  role: Role | undefined,
  cwd: string,
): Map<ConfigKey, RawValue> {
  const found = new Map<ConfigKey, RawValue>();
  for (const option of OPTIONS) {
    for (const name of option.env) {
      // The agent is what CHRONICLE_AGENT_URL points at: it never connects to it.
      if (role === "agent" && name === "CHRONICLE_AGENT_URL") continue;
      const value = env[name];
      if (value === undefined || value === "") continue;
      found.set(option.key, { value, where: name, baseDir: cwd, fromFile: false });
      break;
    }
  }
  return found;
}

export function nonEmpty(value: string | undefined, cwd: string): string | undefined {
  return value === undefined || value === "" ? undefined : resolve(cwd, value);
}

export function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      return false;
    }
    throw error;
  }
}

export function readFile(path: string): Map<ConfigKey, RawValue> {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch (error) {
    const reason = error instanceof Deno.errors.NotFound ? "no such file" : errorMessage(error);
    throw new ConfigError(`Cannot read config file "${path}": ${reason}`);
  }
  let document: unknown;
  try {
    document = parseYaml(text);
  } catch (error) {
    const reason = errorMessage(error).split("\n")[0];
    throw new ConfigError(`Config file "${path}" is not valid YAML: ${reason}`);
  }
  document ??= {};
  if (!isMapping(document)) {
    throw new ConfigError(`Config file "${path}" must hold a mapping of keys to values`);
  }
  const byFileKey = new Map(OPTIONS.map((option) => [option.file, option]));
  const found = new Map<ConfigKey, RawValue>();
  const visit = (mapping: Record<string, unknown>, prefix: string): void => {
    for (const [key, value] of Object.entries(mapping)) {
      const fileKey = prefix + key;
      if (prefix === "" && key === "chronicle") {
        if (!isMapping(value)) {
          throw new ConfigError(
            `Key "chronicle" in "${path}" must hold max_snapshots and max_age_days`,
          );
        }
        visit(value, "chronicle.");
        continue;
      }
      const option = byFileKey.get(fileKey);
      if (!option) throw new ConfigError(`Unknown key "${fileKey}" in "${path}"`);
      if (value === null || value === undefined) continue;
      found.set(option.key, {
        value,
        where: `${fileKey} in "${path}"`,
        baseDir: dirname(path),
        fromFile: true,
      });
    }
  };
  visit(document, "");
  return found;
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
