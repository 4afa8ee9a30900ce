/**
 * Chronicle's configuration: one typed {@linkcode ChronicleConfig} built from flags, then
 * `CHRONICLE_*` environment variables, then `config.yaml`, then defaults, and described
 * with secrets masked for `chronicle config`.
 *
 * @example Resolving and describing
 * ```ts
 * import { deepStrictEqual as assertEquals } from "node:assert/strict";
 * import { describeConfig, resolveConfig } from "./mod.ts";
 * const config = resolveConfig({ argv: ["/tmp/ws", "--ws-listen", "127.0.0.1:3002"], env: {} });
 * assertEquals(config.replication, true);
 * assertEquals(describeConfig(config).wsListen?.source, "flag");
 * ```
 *
 * @module
 */
export type {
  ChronicleConfig,
  ConfigKey,
  ConfigSource,
  LogFormat,
  Role,
  SnapshotRetention,
  ValueOrigin,
} from "./types.ts";
export { ConfigError } from "./errors.ts";
export { CONTAINER_WORKSPACE, resolveConfig, type ResolveConfigOptions } from "./resolve_config.ts";
export { describeConfig, type DescribedValue, MASK } from "./describe_config.ts";
export { type HostPort, isLoopback, parseHostPort } from "./host_port.ts";
export { CONFIG_ENV, CONFIG_FLAG, OPTIONS, type OptionSpec, type ValueKind } from "./_options.ts";
export { OPTION_HELP, type OptionHelp } from "./option_help.ts";
