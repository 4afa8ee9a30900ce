/**
 * What each configuration option means, for `chronicle --help` and the shell completions:
 * one entry per flag of the options table (`OPTIONS` in `_options.ts`); a test keeps the two
 * in step, so an option without help here fails it.
 */
export interface OptionHelp {
  /** The value's placeholder (`DIR`, `HOST:PORT`); absent for a switch. */
  value?: string;
  /** One line, lower case, no final period. */
  help: string;
}

/** Help for every option, by flag (without dashes), in the order `--help` lists them. */
export const OPTION_HELP: Readonly<Record<string, OptionHelp>> = {
  workspace: { value: "DIR", help: "the workspace (or give it as the first argument; default .)" },
  "data-dir": { value: "DIR", help: "database and CAS (default WORKSPACE/.chronicle)" },
  database: { value: "FILE", help: "the SQLite database, apart from the data folder" },
  "cas-dir": { value: "DIR", help: "the content-addressed store, apart from the data folder" },
  http: { value: "HOST:PORT", help: "serve the REST API over TCP (writes need --token)" },
  replication: { help: "master: accept replicas on --socket and/or --ws-listen" },
  socket: { value: "PATH", help: "the master's Unix socket (default DATA/chronicle.sock)" },
  "ws-listen": {
    value: "HOST:PORT",
    help: "the master's WebSocket listener (implies --replication)",
  },
  connect: { value: "PATH", help: "replica of the master at this Unix socket" },
  "ws-connect": { value: "URL", help: "replica of the master at this ws:// or wss:// URL" },
  "local-sync": { help: "a replica that leaves conflicts for a person to resolve" },
  "sandbox-id": { value: "ID", help: "a replica's identity (default: made once and stored)" },
  "agent-id": { value: "ID", help: "a name for this workspace in logs and status" },
  ignore: { value: "PATTERN", help: "gitignore-style pattern, repeatable (and .chronicleignore)" },
  token: { value: "TOKEN", help: "bearer token for WebSocket and REST writes" },
  insecure: { help: "allow a non-loopback listener without a token" },
  "log-format": { value: "text|json", help: "log lines for people or for collectors" },
  quiet: { help: "log only warnings and errors" },
  "heartbeat-ms": {
    value: "N",
    help:
      "milliseconds between replication heartbeats (default 1000); a replica leaves a master silent for 5 (at least 3 s), then waits twice as long on each new connection, up to 60 s",
  },
  "debounce-ms": {
    value: "N",
    help: "milliseconds a path must settle before capture (default 50; local-sync 300)",
  },
  "max-writeback-bytes": {
    value: "SIZE",
    help:
      "largest file a replica writes back, on the master and on the replica, e.g. 1GiB (default 64MiB, at most 64GiB; one larger than a message carries goes in pieces)",
  },
  "max-connections": {
    value: "N",
    help: "open connections over all listeners (default 1024, less under ulimit -n)",
  },
  "max-listener-connections": {
    value: "N",
    help: "open connections on one listener (default half of --max-connections)",
  },
  "handshake-timeout-ms": {
    value: "N",
    help: "milliseconds to send a request or first frame (default 10000)",
  },
  "idle-timeout-ms": {
    value: "N",
    help: "milliseconds an HTTP connection may sit idle (default 60000)",
  },
  "max-partial-frame-bytes": {
    value: "SIZE",
    help: "unfinished replication frames held, all connections (default 128MiB)",
  },
  "max-queued-fetches": {
    value: "N",
    help: "outstanding fetches before a replica is cut off (default 256)",
  },
  "writeback-mode-bits": {
    value: "OCTAL",
    help: "mode bits a write-back may set (default 0777: no setuid/setgid/sticky)",
  },
  "max-snapshots": { value: "N", help: "pre-action snapshots kept at most (default 100)" },
  "max-age-days": { value: "N", help: "days a pre-action snapshot is kept at most (default 30)" },
  "object-store": {
    value: "s3://BUCKET/PREFIX",
    help: "S3-compatible tier of the CAS, and checkpoints (default none)",
  },
  "s3-endpoint": {
    value: "URL",
    help: "S3-compatible service's URL (default AWS in --s3-region)",
  },
  "s3-region": { value: "REGION", help: "region for request signing (default us-east-1)" },
  "s3-path-style": {
    help: "bucket in the URL's path, not its host (default: with --s3-endpoint)",
  },
  "checkpoint-interval": {
    value: "DURATION",
    help: "time between object-store checkpoints, e.g. 15m (default none)",
  },
  "cache-limit": {
    value: "SIZE",
    help: "local content bytes kept with an object store (default unlimited)",
  },
  "checkpoint-keep": { value: "N", help: "checkpoints kept in the object store (default 10)" },
  "no-snapshots": { help: "off the record: take no pre-action snapshots" },
};
