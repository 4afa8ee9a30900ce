/** Where an effective configuration value came from, highest precedence first. */
export type ConfigSource = "flag" | "env" | "file" | "default";

/** The source of one value and the exact name that set it. */
export interface ValueOrigin {
  /** Which layer set the value. */
  source: ConfigSource;
  /**
   * The flag (`--ws-listen`), environment variable (`CHRONICLE_AGENT_URL`) or file key
   * (`ws_listen in "/w/config.yaml"`) that set it; absent for defaults.
   */
  name?: string;
}

/** Log line format: `text` for people, `json` for log collectors. */
export type LogFormat = "text" | "json";

/** The role a compiled binary plays, which changes a few defaults. */
export type Role = "agent" | "sandbox";

/** How long pre-action snapshots are kept. */
export interface SnapshotRetention {
  /** Snapshots kept at most; older ones are pruned. @default {100} */
  maxSnapshots: number;
  /** Days a snapshot is kept at most. @default {30} */
  maxAgeDays: number;
}

/** Every configuration key, snapshot retention keys included, as named in {@linkcode ValueOrigin} maps. */
export type ConfigKey =
  | "workspace"
  | "dataDir"
  | "database"
  | "casDir"
  | "http"
  | "replication"
  | "socket"
  | "wsListen"
  | "connect"
  | "wsConnect"
  | "localSync"
  | "sandboxId"
  | "agentId"
  | "ignore"
  | "token"
  | "insecure"
  | "logFormat"
  | "quiet"
  | "heartbeatMs"
  | "debounceMs"
  | "maxWritebackBytes"
  | "maxConnections"
  | "maxListenerConnections"
  | "handshakeTimeoutMs"
  | "idleTimeoutMs"
  | "maxPartialFrameBytes"
  | "maxQueuedFetches"
  | "writebackModeBits"
  | "snapshots.maxSnapshots"
  | "snapshots.maxAgeDays"
  | "noSnapshots"
  | "objectStore"
  | "s3Endpoint"
  | "s3Region"
  | "s3PathStyle"
  | "checkpointInterval"
  | "checkpointKeep"
  | "cacheLimit"
  | "configFile";

/**
 * Chronicle's effective configuration: every option of the README's table, validated, with
 * paths absolute. Made by {@linkcode resolveConfig}; printed by {@linkcode describeConfig}.
 */
export interface ChronicleConfig {
  /** Absolute path of the workspace. @default {the current folder; "/workspace" for the agent and sandbox binaries} */
  workspace: string;
  /** Absolute path of the data folder. @default {"WORKSPACE/.chronicle"} */
  dataDir: string;
  /** Absolute path of the SQLite database. @default {"DATA/chronicle.db"} */
  database: string;
  /** Absolute path of the content-addressed store. @default {"DATA/cas"} */
  casDir: string;
  /** `HOST:PORT` of the REST API, when served over TCP. */
  http?: string;
  /** Master: accept replicas. Implied by `wsListen`. @default {false; true for the agent binary} */
  replication: boolean;
  /** Absolute path of the master's Unix socket. @default {"DATA/chronicle.sock"} */
  socket: string;
  /** `HOST:PORT` of the master's WebSocket listener. */
  wsListen?: string;
  /** Absolute path of the master's Unix socket this replica connects to. */
  connect?: string;
  /** `ws://` or `wss://` URL of the master this replica connects to (also `CHRONICLE_AGENT_URL`). */
  wsConnect?: string;
  /** Replica that leaves conflicts for a person to resolve. @default {false} */
  localSync: boolean;
  /** A replica's identity; when absent one is made once and stored. */
  sandboxId?: string;
  /** A name for this workspace in logs and status. */
  agentId?: string;
  /** Gitignore-style patterns, in addition to `WORKSPACE/.chronicleignore`. @default {[]} */
  ignore: string[];
  /** Bearer token for WebSocket and REST writes. A secret: never print it. */
  token?: string;
  /** Allow a non-loopback listener without a token. @default {false} */
  insecure: boolean;
  /** Log line format. @default {"text"} */
  logFormat: LogFormat;
  /** Only warnings and errors. @default {false} */
  quiet: boolean;
  /** Milliseconds between heartbeats. @default {1000} */
  heartbeatMs: number;
  /**
   * Milliseconds a watcher waits for a path to settle. The local-sync default of 300 is
   * the caller's to apply when this is a default. @default {50}
   */
  debounceMs: number;
  /** Largest content a replica writes back, at most the 100 MiB frame limit. @default {67108864} */
  maxWritebackBytes: number;
  /**
   * Connections open at once over every listener (REST, WebSocket, Unix sockets).
   * @default {1024, or fewer so that they stay under the open-file limit}
   */
  maxConnections: number;
  /** Connections one listener keeps open at once. @default {half of maxConnections} */
  maxListenerConnections: number;
  /** Milliseconds a connection has to send its request, upgrade or first frame. @default {10000} */
  handshakeTimeoutMs: number;
  /** Milliseconds an HTTP connection may stay idle between requests. @default {60000} */
  idleTimeoutMs: number;
  /** Bytes of replication frames not yet complete, over every connection. @default {134217728} */
  maxPartialFrameBytes: number;
  /** Content fetches one replica connection may have outstanding. @default {256} */
  maxQueuedFetches: number;
  /**
   * Permission bits a replica's write-back may set; the others are cleared (no setuid,
   * setgid or sticky by default). @default {0o777}
   */
  writebackModeBits: number;
  /** Retention of pre-action snapshots (file section `chronicle:`). */
  snapshots: SnapshotRetention;
  /** Take no pre-action snapshots. @default {false} */
  noSnapshots: boolean;
  /** `s3://BUCKET/PREFIX`: the object-store tier of the CAS, and where checkpoints go. */
  objectStore?: string;
  /** The S3-compatible service's URL (MinIO, R2, a local server). */
  s3Endpoint?: string;
  /** Region for request signing. @default {"us-east-1"} */
  s3Region: string;
  /** Address the bucket in the URL's path rather than its host name. @default {false; true with an endpoint} */
  s3PathStyle?: boolean;
  /** Milliseconds between periodic checkpoints to the object store (and one at SIGTERM). */
  checkpointInterval?: number;
  /** Checkpoints kept in the bucket. @default {10} */
  checkpointKeep: number;
  /** Most bytes of local content files with an object store; older ones safe there are evicted. */
  cacheLimit?: number;
  /** Absolute path of the `config.yaml` that was read, if any. */
  configFile?: string;
  /** Where each value came from. */
  sources: Record<ConfigKey, ValueOrigin>;
}
