import { OPTIONS } from "./_options.ts";
import type { ChronicleConfig, ConfigSource } from "./types.ts";

/** What stands in for a secret that is set. */
export const MASK = "****";

/** One line of {@linkcode describeConfig}: the value and where it came from. */
export interface DescribedValue {
  /** The value, with secrets masked; `null` when unset. */
  value: unknown;
  /** Where the value came from: a flag, the environment, the config file or the default. */
  source: ConfigSource;
  /** The flag, variable or file key that set it; absent for defaults. */
  name?: string;
}

/**
 * Describes the effective configuration for people and scripts: every option (snapshot
 * retention as `snapshots.maxSnapshots` and `snapshots.maxAgeDays`) with its value and
 * source, and `configFile`. The token is shown as `"****"` when set, and a password or
 * `token` query parameter in the master's URL is masked the same way.
 *
 * @param config A configuration from {@linkcode resolveConfig}.
 * @returns Keys in the order of the README's option table.
 *
 * @example Secrets are masked
 * ```ts
 * import { deepStrictEqual as assertEquals } from "node:assert/strict";
 * import { describeConfig, resolveConfig } from "./mod.ts";
 * const config = resolveConfig({ argv: ["/tmp/ws"], env: { CHRONICLE_TOKEN: "s3cret" } });
 * assertEquals(describeConfig(config).token, {
 *   value: "****",
 *   source: "env",
 *   name: "CHRONICLE_TOKEN",
 * });
 * ```
 */
export function describeConfig(config: ChronicleConfig): Record<string, DescribedValue> {
  const described: Record<string, DescribedValue> = {};
  for (const option of OPTIONS) {
    const origin = config.sources[option.key];
    let value = valueOf(config, option.key);
    if (option.kind === "secret" && value !== undefined) value = MASK;
    if (option.kind === "wsUrl" && typeof value === "string") value = maskUrl(value);
    described[option.key] = {
      value: value ?? null,
      source: origin.source,
      ...(origin.name !== undefined ? { name: origin.name } : {}),
    };
  }
  const origin = config.sources.configFile;
  described.configFile = {
    value: config.configFile ?? null,
    source: origin.source,
    ...(origin.name !== undefined ? { name: origin.name } : {}),
  };
  return described;
}

function valueOf(config: ChronicleConfig, key: string): unknown {
  if (key.startsWith("snapshots.")) {
    return config.snapshots[key.slice("snapshots.".length) as keyof ChronicleConfig["snapshots"]];
  }
  return config[key as keyof ChronicleConfig];
}

function maskUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return value;
  }
  let changed = false;
  if (url.password !== "") {
    url.password = MASK;
    changed = true;
  }
  for (const key of [...url.searchParams.keys()]) {
    if (/token|secret|key|password/i.test(key)) {
      url.searchParams.set(key, MASK);
      changed = true;
    }
  }
  return changed ? url.toString() : value;
}
