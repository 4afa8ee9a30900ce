import { MAX_AGE_DAYS_LIMIT, MAX_SNAPSHOTS_LIMIT } from "../snapshot/mod.ts";
import type { ConfigKey } from "./types.ts";

/** How a raw value is read and checked. */
export type ValueKind =
  | "path"
  | "boolean"
  | "list"
  | "hostPort"
  | "wsUrl"
  | "integer"
  | "size"
  | "logFormat"
  | "id"
  | "secret"
  | "s3Url"
  | "httpUrl"
  | "duration"
  | "octal";

/** One configuration option in its three spellings. */
export interface OptionSpec {
  /** The option's name as `ChronicleConfig` spells it (camelCase). */
  key: ConfigKey;
  /** Long flag without dashes. */
  flag: string;
  /** One-letter flag, if any. */
  short?: string;
  /** Environment variables, the first being the canonical `CHRONICLE_<UPPER_SNAKE>`. */
  env: string[];
  /** Key in `config.yaml`; a dotted key lives in a section. */
  file: string;
  /** How the raw value is read and checked. */
  kind: ValueKind;
  /** Inclusive lower bound of an integer or size. */
  min?: number;
  /** Inclusive upper bound of an integer or size. */
  max?: number;
  /** Words shown in `chronicle config` and errors for an integer, e.g. "milliseconds". */
  unit?: string;
}

/** The highest write-back limit accepted (`--max-writeback-bytes`): 64 GiB. */
const MAX_WRITEBACK_BYTES = 64 * 1024 ** 3;

/** Every option, in the order `chronicle config` prints them. */
export const OPTIONS: readonly OptionSpec[] = [
  {
    key: "workspace",
    flag: "workspace",
    short: "C",
    env: ["CHRONICLE_WORKSPACE"],
    file: "workspace",
    kind: "path",
  },
  { key: "dataDir", flag: "data-dir", env: ["CHRONICLE_DATA_DIR"], file: "data_dir", kind: "path" },
  {
    key: "database",
    flag: "database",
    env: ["CHRONICLE_DATABASE"],
    file: "database",
    kind: "path",
  },
  { key: "casDir", flag: "cas-dir", env: ["CHRONICLE_CAS_DIR"], file: "cas_dir", kind: "path" },
  { key: "http", flag: "http", env: ["CHRONICLE_HTTP"], file: "http", kind: "hostPort" },
  {
    key: "replication",
    flag: "replication",
    env: ["CHRONICLE_REPLICATION"],
    file: "replication",
    kind: "boolean",
  },
  { key: "socket", flag: "socket", env: ["CHRONICLE_SOCKET"], file: "socket", kind: "path" },
  {
    key: "wsListen",
    flag: "ws-listen",
    env: ["CHRONICLE_WS_LISTEN"],
    file: "ws_listen",
    kind: "hostPort",
  },
  { key: "connect", flag: "connect", env: ["CHRONICLE_CONNECT"], file: "connect", kind: "path" },
  {
    key: "wsConnect",
    flag: "ws-connect",
    env: ["CHRONICLE_WS_CONNECT", "CHRONICLE_AGENT_URL"],
    file: "ws_connect",
    kind: "wsUrl",
  },
  {
    key: "localSync",
    flag: "local-sync",
    env: ["CHRONICLE_LOCAL_SYNC"],
    file: "local_sync",
    kind: "boolean",
  },
  {
    key: "sandboxId",
    flag: "sandbox-id",
    env: ["CHRONICLE_SANDBOX_ID"],
    file: "sandbox_id",
    kind: "id",
  },
  { key: "agentId", flag: "agent-id", env: ["CHRONICLE_AGENT_ID"], file: "agent_id", kind: "id" },
  { key: "ignore", flag: "ignore", env: ["CHRONICLE_IGNORE"], file: "ignore", kind: "list" },
  { key: "token", flag: "token", env: ["CHRONICLE_TOKEN"], file: "token", kind: "secret" },
  {
    key: "insecure",
    flag: "insecure",
    env: ["CHRONICLE_INSECURE"],
    file: "insecure",
    kind: "boolean",
  },
  {
    key: "logFormat",
    flag: "log-format",
    env: ["CHRONICLE_LOG_FORMAT"],
    file: "log_format",
    kind: "logFormat",
  },
  { key: "quiet", flag: "quiet", env: ["CHRONICLE_QUIET"], file: "quiet", kind: "boolean" },
  {
    key: "heartbeatMs",
    flag: "heartbeat-ms",
    env: ["CHRONICLE_HEARTBEAT_MS"],
    file: "heartbeat_ms",
    kind: "integer",
    min: 10,
    max: 3_600_000,
    unit: "milliseconds",
  },
  {
    key: "debounceMs",
    flag: "debounce-ms",
    env: ["CHRONICLE_DEBOUNCE_MS"],
    file: "debounce_ms",
    kind: "integer",
    min: 0,
    max: 60_000,
    unit: "milliseconds",
  },
  {
    key: "maxWritebackBytes",
    flag: "max-writeback-bytes",
    env: ["CHRONICLE_MAX_WRITEBACK_BYTES"],
    file: "max_writeback_bytes",
    kind: "size",
    min: 1,
    // A larger content than one frame carries goes in pieces (PROTOCOL.md §4), each written
    // to disk on the master as it comes: the bound is the disk's, not memory's.
    max: MAX_WRITEBACK_BYTES,
  },
  {
    key: "maxConnections",
    flag: "max-connections",
    env: ["CHRONICLE_MAX_CONNECTIONS"],
    file: "max_connections",
    kind: "integer",
    min: 1,
    max: 65_536,
    unit: "connections",
  },
  {
    key: "maxListenerConnections",
    flag: "max-listener-connections",
    env: ["CHRONICLE_MAX_LISTENER_CONNECTIONS"],
    file: "max_listener_connections",
    kind: "integer",
    min: 1,
    max: 65_536,
    unit: "connections",
  },
  {
    key: "handshakeTimeoutMs",
    flag: "handshake-timeout-ms",
    env: ["CHRONICLE_HANDSHAKE_TIMEOUT_MS"],
    file: "handshake_timeout_ms",
    kind: "integer",
    min: 100,
    max: 600_000,
    unit: "milliseconds",
  },
  {
    key: "idleTimeoutMs",
    flag: "idle-timeout-ms",
    env: ["CHRONICLE_IDLE_TIMEOUT_MS"],
    file: "idle_timeout_ms",
    kind: "integer",
    min: 1_000,
    max: 86_400_000,
    unit: "milliseconds",
  },
  {
    key: "maxPartialFrameBytes",
    flag: "max-partial-frame-bytes",
    env: ["CHRONICLE_MAX_PARTIAL_FRAME_BYTES"],
    file: "max_partial_frame_bytes",
    kind: "size",
    min: 1024 * 1024,
    max: 16 * 1024 * 1024 * 1024,
  },
  {
    key: "maxQueuedFetches",
    flag: "max-queued-fetches",
    env: ["CHRONICLE_MAX_QUEUED_FETCHES"],
    file: "max_queued_fetches",
    kind: "integer",
    // A replica keeps up to 64 fetches in flight.
    min: 64,
    max: 65_536,
    unit: "fetches",
  },
  {
    // Permission bits a replica's write-back may set (SECURITY.md); octal, e.g. 0755.
    key: "writebackModeBits",
    flag: "writeback-mode-bits",
    env: ["CHRONICLE_WRITEBACK_MODE_BITS"],
    file: "writeback_mode_bits",
    kind: "octal",
    min: 0,
    max: 0o7777,
  },
  {
    key: "snapshots.maxSnapshots",
    flag: "max-snapshots",
    env: ["CHRONICLE_MAX_SNAPSHOTS"],
    file: "chronicle.max_snapshots",
    kind: "integer",
    min: 1,
    max: MAX_SNAPSHOTS_LIMIT,
    unit: "snapshots",
  },
  {
    key: "snapshots.maxAgeDays",
    flag: "max-age-days",
    env: ["CHRONICLE_MAX_AGE_DAYS"],
    file: "chronicle.max_age_days",
    kind: "integer",
    min: 1,
    max: MAX_AGE_DAYS_LIMIT,
    unit: "days",
  },
  {
    key: "objectStore",
    flag: "object-store",
    env: ["CHRONICLE_OBJECT_STORE"],
    file: "object_store",
    kind: "s3Url",
  },
  {
    key: "s3Endpoint",
    flag: "s3-endpoint",
    env: ["CHRONICLE_S3_ENDPOINT"],
    file: "s3_endpoint",
    kind: "httpUrl",
  },
  {
    key: "s3Region",
    flag: "s3-region",
    env: ["CHRONICLE_S3_REGION"],
    file: "s3_region",
    kind: "id",
  },
  {
    key: "s3PathStyle",
    flag: "s3-path-style",
    env: ["CHRONICLE_S3_PATH_STYLE"],
    file: "s3_path_style",
    kind: "boolean",
  },
  {
    key: "checkpointInterval",
    flag: "checkpoint-interval",
    env: ["CHRONICLE_CHECKPOINT_INTERVAL"],
    file: "checkpoint_interval",
    kind: "duration",
    min: 1000,
    max: 7 * 24 * 3_600_000,
    unit: "milliseconds",
  },
  {
    key: "cacheLimit",
    flag: "cache-limit",
    env: ["CHRONICLE_CACHE_LIMIT"],
    file: "cache_limit",
    kind: "size",
    min: 1,
  },
  {
    key: "checkpointKeep",
    flag: "checkpoint-keep",
    env: ["CHRONICLE_CHECKPOINT_KEEP"],
    file: "checkpoint_keep",
    kind: "integer",
    min: 1,
    max: 10_000,
    unit: "checkpoints",
  },
  {
    key: "noSnapshots",
    flag: "no-snapshots",
    env: ["CHRONICLE_NO_SNAPSHOTS"],
    file: "no_snapshots",
    kind: "boolean",
  },
];

/** Flags that are not configuration values but steer how it is read. */
export const CONFIG_FLAG = "config";
/** Environment variable naming the config file, below `--config`. */
export const CONFIG_ENV = "CHRONICLE_CONFIG";
