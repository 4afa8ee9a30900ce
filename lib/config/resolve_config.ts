import { join, resolve } from "node:path";
import { ConfigError } from "./errors.ts";
import { LOCAL_SYNC_DEBOUNCE_MS } from "../localsync/mod.ts";
import { DEFAULT_SNAPSHOT_CONFIG } from "../snapshot/mod.ts";
import { defaultMaxConnections } from "../net/mod.ts";
import { RESERVED_ORIGINS } from "../store/mod.ts";
import { isLoopback, parseHostPort } from "./host_port.ts";
import { CONFIG_ENV, OPTIONS, type OptionSpec } from "./_options.ts";
import { parseValue, type RawValue } from "./_parse_value.ts";
import { isFile, nonEmpty, readEnv, readFile, readFlags } from "./_read_sources.ts";
import type { ChronicleConfig, ConfigKey, ConfigSource, Role, ValueOrigin } from "./types.ts";

/** Options for {@linkcode resolveConfig}. */
export interface ResolveConfigOptions {
  /** Command-line arguments after the program (and command) name. */
  argv: readonly string[];
  /** Environment variables, e.g. `Deno.env.toObject()`. Empty values count as unset. */
  env: Readonly<Record<string, string | undefined>>;
  /**
   * A `config.yaml` to read when neither `--config` nor `CHRONICLE_CONFIG` names one;
   * it must exist. @default {"DATA/config.yaml" if present; never "WORKSPACE/config.yaml", which
   * belongs to the user's project}
   */
  configFile?: string;
  /** Folder relative flag and environment paths are resolved against. @default {Deno.cwd()} */
  cwd?: string;
  /**
   * The binary's role. `agent`: replication on and workspace `/workspace` by default, and
   * `CHRONICLE_AGENT_URL` ignored. `sandbox`: workspace `/workspace` by default, and a
   * connection to the master is required.
   */
  role?: Role;
}

/** Workspace of the agent and sandbox binaries when none is given. */
export const CONTAINER_WORKSPACE = "/workspace";

const DEFAULTS = {
  replication: false,
  localSync: false,
  ignore: [] as string[],
  insecure: false,
  logFormat: "text",
  quiet: false,
  heartbeatMs: 1000,
  debounceMs: 50,
  maxWritebackBytes: 64 * 1024 * 1024,
  handshakeTimeoutMs: 10_000,
  idleTimeoutMs: 60_000,
  maxPartialFrameBytes: 128 * 1024 * 1024,
  maxQueuedFetches: 256,
  writebackModeBits: 0o777,
  "snapshots.maxSnapshots": DEFAULT_SNAPSHOT_CONFIG.maxSnapshots,
  "snapshots.maxAgeDays": DEFAULT_SNAPSHOT_CONFIG.maxAgeDays,
  noSnapshots: false,
} as const satisfies Partial<Record<ConfigKey, unknown>>;

const RANK: Record<ConfigSource, number> = { flag: 3, env: 2, file: 1, default: 0 };
/** Unix socket paths are limited to 107 bytes plus a NUL on Linux. */
const MAX_SOCKET_PATH_BYTES = 107;

interface Chosen {
  value: unknown;
  origin: ValueOrigin;
}

/**
 * Builds the effective configuration from command-line flags, then environment variables
 * (`CHRONICLE_<UPPER_SNAKE>`; `CHRONICLE_AGENT_URL` is an alias of `CHRONICLE_WS_CONNECT`;
 * lists comma-separated), then `config.yaml` (snake_case keys; snapshot retention under
 * `chronicle: { max_snapshots, max_age_days }`; relative paths from the file's folder),
 * then defaults: the first that gives a value wins. The file is `--config FILE`, else
 * `CHRONICLE_CONFIG`, else `DATA/config.yaml` when present, never `WORKSPACE/config.yaml`.
 *
 * `--connect` and `--ws-connect` are one choice: the higher source decides both, so a
 * `--connect` flag overrides `CHRONICLE_AGENT_URL`. `--ws-listen` implies `--replication`.
 *
 * @param options The arguments, environment and role.
 * @returns The validated configuration, paths absolute, with the source of every value.
 * @throws {ConfigError} For an unknown option, a bad value (naming it and where it came
 * from), an unreadable or malformed `config.yaml`, or options that contradict each other.
 *
 * @example Flags beat the environment
 * ```ts
 * import { deepStrictEqual as assertEquals } from "node:assert/strict";
 * import { resolveConfig } from "./resolve_config.ts";
 * const config = resolveConfig({
 *   argv: ["/tmp/ws", "--heartbeat-ms", "250"],
 *   env: { CHRONICLE_HEARTBEAT_MS: "500", CHRONICLE_QUIET: "true" },
 * });
 * assertEquals([config.heartbeatMs, config.quiet], [250, true]);
 * assertEquals(config.database, "/tmp/ws/.chronicle/chronicle.db");
 * ```
 */
export function resolveConfig(options: ResolveConfigOptions): ChronicleConfig {
  const cwd = options.cwd ?? Deno.cwd();
  const { flags, explicitConfig } = readFlags(options.argv, cwd);
  const env = readEnv(options.env, options.role, cwd);

  // The file is found from the workspace and data folder the flags and environment give.
  const early = (key: ConfigKey): string | undefined => {
    const raw = flags.get(key) ?? env.get(key);
    return raw === undefined ? undefined : parseValue(spec(key), raw) as string;
  };
  const searchWorkspace = early("workspace") ?? defaultWorkspace(options.role, cwd);
  const searchData = early("dataDir") ?? join(searchWorkspace, ".chronicle");
  const envConfig = nonEmpty(options.env[CONFIG_ENV], cwd);
  const fileName = explicitConfig ?? envConfig ??
    (options.configFile === undefined ? undefined : resolve(cwd, options.configFile));
  const configOrigin: ValueOrigin = explicitConfig !== undefined
    ? { source: "flag", name: "--config" }
    : envConfig !== undefined
    ? { source: "env", name: CONFIG_ENV }
    : { source: "default" };
  // Only the data folder: WORKSPACE/config.yaml is the user's file (their project's own).
  const configFile = fileName ?? [join(searchData, "config.yaml")].find(isFile);
  const file = configFile === undefined ? new Map<ConfigKey, RawValue>() : readFile(configFile);

  const chosen = new Map<ConfigKey, Chosen>();
  for (const option of OPTIONS) {
    for (const [source, layer] of [["flag", flags], ["env", env], ["file", file]] as const) {
      const raw = layer.get(option.key);
      if (raw === undefined) continue;
      chosen.set(option.key, {
        value: parseValue(option, raw),
        origin: { source, name: nameOf(raw.where) },
      });
      break;
    }
  }
  chooseConnection(chosen);

  const take = <T>(key: ConfigKey, fallback: T): T => {
    const found = chosen.get(key);
    if (found) return found.value as T;
    chosen.set(key, { value: fallback, origin: { source: "default" } });
    return fallback;
  };
  const takeOptional = <T>(key: ConfigKey): T | undefined =>
    chosen.get(key)?.value as T | undefined;

  const workspace = take("workspace", defaultWorkspace(options.role, cwd));
  const dataDir = take("dataDir", join(workspace, ".chronicle"));
  const wsListen = takeOptional<string>("wsListen");
  if (wsListen !== undefined && !chosen.has("replication")) {
    chosen.set("replication", { value: true, origin: chosen.get("wsListen")!.origin });
  }
  const localSync = take("localSync", DEFAULTS.localSync);
  const config: ChronicleConfig = {
    workspace,
    dataDir,
    database: take("database", join(dataDir, "chronicle.db")),
    casDir: take("casDir", join(dataDir, "cas")),
    replication: take("replication", options.role === "agent" ? true : DEFAULTS.replication),
    socket: take("socket", join(dataDir, "chronicle.sock")),
    localSync,
    ignore: take("ignore", [...DEFAULTS.ignore]),
    insecure: take("insecure", DEFAULTS.insecure),
    logFormat: take("logFormat", DEFAULTS.logFormat),
    quiet: take("quiet", DEFAULTS.quiet),
    heartbeatMs: take("heartbeatMs", DEFAULTS.heartbeatMs),
    // Editors save in bursts: local-sync waits longer unless told otherwise.
    debounceMs: take("debounceMs", localSync ? LOCAL_SYNC_DEBOUNCE_MS : DEFAULTS.debounceMs),
    maxWritebackBytes: take("maxWritebackBytes", DEFAULTS.maxWritebackBytes),
    ...connectionLimits(take),
    writebackModeBits: take("writebackModeBits", DEFAULTS.writebackModeBits),
    snapshots: {
      maxSnapshots: take("snapshots.maxSnapshots", DEFAULTS["snapshots.maxSnapshots"]),
      maxAgeDays: take("snapshots.maxAgeDays", DEFAULTS["snapshots.maxAgeDays"]),
    },
    noSnapshots: take("noSnapshots", DEFAULTS.noSnapshots),
    s3Region: take("s3Region", "us-east-1"),
    checkpointKeep: take("checkpointKeep", 10),
    sources: {} as Record<ConfigKey, ValueOrigin>,
  };
  for (
    const key of [
      "http",
      "wsListen",
      "connect",
      "wsConnect",
      "sandboxId",
      "agentId",
      "token",
      "objectStore",
      "s3Endpoint",
    ] as const
  ) {
    const value = takeOptional<string>(key);
    if (value !== undefined) config[key] = value;
    else chosen.set(key, { value: undefined, origin: { source: "default" } });
  }
  const pathStyle = takeOptional<boolean>("s3PathStyle");
  if (pathStyle !== undefined) config.s3PathStyle = pathStyle;
  else chosen.set("s3PathStyle", { value: undefined, origin: { source: "default" } });
  const cacheLimit = takeOptional<number>("cacheLimit");
  if (cacheLimit !== undefined) config.cacheLimit = cacheLimit;
  else chosen.set("cacheLimit", { value: undefined, origin: { source: "default" } });
  const interval = takeOptional<number>("checkpointInterval");
  if (interval !== undefined) config.checkpointInterval = interval;
  else chosen.set("checkpointInterval", { value: undefined, origin: { source: "default" } });
  if (configFile !== undefined) config.configFile = configFile;
  for (const option of OPTIONS) config.sources[option.key] = chosen.get(option.key)!.origin;
  config.sources.configFile = configOrigin;

  checkCombination(config, options.role);
  return config;
}

/** The connection and byte limits; the connection defaults follow the open-file limit. */
function connectionLimits(
  take: <T>(key: ConfigKey, fallback: T) => T,
): Pick<
  ChronicleConfig,
  | "maxConnections"
  | "maxListenerConnections"
  | "handshakeTimeoutMs"
  | "idleTimeoutMs"
  | "maxPartialFrameBytes"
  | "maxQueuedFetches"
> {
  const maxConnections = take("maxConnections", defaultMaxConnections());
  return {
    maxConnections,
    // A flood on one listener leaves the other half for the others.
    maxListenerConnections: take(
      "maxListenerConnections",
      Math.max(1, Math.floor(maxConnections / 2)),
    ),
    handshakeTimeoutMs: take("handshakeTimeoutMs", DEFAULTS.handshakeTimeoutMs),
    idleTimeoutMs: take("idleTimeoutMs", DEFAULTS.idleTimeoutMs),
    maxPartialFrameBytes: take("maxPartialFrameBytes", DEFAULTS.maxPartialFrameBytes),
    maxQueuedFetches: take("maxQueuedFetches", DEFAULTS.maxQueuedFetches),
  };
}

function spec(key: ConfigKey): OptionSpec {
  return OPTIONS.find((option) => option.key === key)!;
}

function defaultWorkspace(role: Role | undefined, cwd: string): string {
  return role === undefined ? resolve(cwd) : CONTAINER_WORKSPACE;
}

function nameOf(where: string): string {
  return where.replace(/ in ".*"$/s, "");
}

/** `connect` and `wsConnect` are one choice: keep only the higher source's. */
function chooseConnection(chosen: Map<ConfigKey, Chosen>): void {
  const unix = chosen.get("connect");
  const ws = chosen.get("wsConnect");
  if (!unix || !ws) return;
  const unixRank = RANK[unix.origin.source];
  const wsRank = RANK[ws.origin.source];
  if (unixRank === wsRank) {
    throw new ConfigError(
      `Give one master to connect to: ${unix.origin.name} and ${ws.origin.name} are both set`,
    );
  }
  chosen.delete(unixRank > wsRank ? "wsConnect" : "connect");
}

function checkCombination(config: ChronicleConfig, role: Role | undefined): void {
  const replica = config.connect ?? config.wsConnect;
  if (config.replication && replica !== undefined) {
    const how = config.connect !== undefined ? "--connect" : "--ws-connect";
    throw new ConfigError(
      `A master (--replication or --ws-listen) cannot also be a replica (${how} "${replica}")`,
    );
  }
  if (config.localSync && replica === undefined) {
    throw new ConfigError("--local-sync needs a master: give --connect PATH or --ws-connect URL");
  }
  if (config.objectStore === undefined) {
    const needing = config.checkpointInterval !== undefined
      ? "--checkpoint-interval"
      : config.cacheLimit !== undefined
      ? "--cache-limit"
      : null;
    if (needing !== null) {
      throw new ConfigError(
        `${needing} needs an object store: give --object-store s3://BUCKET/PREFIX`,
      );
    }
  }
  if (role === "sandbox" && replica === undefined) {
    throw new ConfigError(
      "The sandbox needs its agent: give --ws-connect URL, --connect PATH or CHRONICLE_AGENT_URL",
    );
  }
  for (const key of ["wsListen", "http"] as const) {
    const address = config[key];
    if (address === undefined || config.token !== undefined || config.insecure) continue;
    if (!isLoopback(parseHostPort(address).hostname)) {
      const flag = key === "wsListen" ? "--ws-listen" : "--http";
      throw new ConfigError(
        `Refusing to listen on "${address}" (${flag}) without a token: give --token or CHRONICLE_TOKEN, or --insecure`,
      );
    }
  }
  for (const key of ["socket", "connect"] as const) {
    const path = config[key];
    if (path === undefined) continue;
    const bytes = new TextEncoder().encode(path).length;
    if (bytes > MAX_SOCKET_PATH_BYTES && (key === "connect" || config.replication)) {
      throw new ConfigError(
        `Socket path "${path}" is ${bytes} bytes; Unix sockets allow at most ${MAX_SOCKET_PATH_BYTES}`,
      );
    }
  }
  if (config.sandboxId !== undefined && RESERVED_ORIGINS.includes(config.sandboxId)) {
    throw new ConfigError(`Sandbox id "${config.sandboxId}" is reserved for origins`);
  }
}
