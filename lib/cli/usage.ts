/** The text `chronicle --help` prints. */
export const USAGE = `chronicle: a versioned, replicated workspace filesystem for AI agents

Usage:
  chronicle [WORKSPACE] [options]        run on WORKSPACE (default: .) until SIGINT/SIGTERM
  chronicle COMMAND [args] [--json]      read or act on a workspace's history

Options:
  --data-dir DIR, --database FILE, --cas-dir DIR   where the store lives (default WORKSPACE/.chronicle)
  --http HOST:PORT          serve the REST API
  --replication             master: accept replicas on --socket and/or --ws-listen
  --socket PATH             the master's Unix socket (default DATA/chronicle.sock)
  --ws-listen HOST:PORT     the master's WebSocket listener
  --connect PATH            replica of the master at this Unix socket
  --ws-connect URL          replica of the master at this WebSocket URL
  --local-sync              replica that leaves conflicts for a person to resolve
  --sandbox-id ID, --agent-id ID, --ignore PATTERN, --token TOKEN, --insecure
  --log-format text|json, --quiet, --config FILE, --version
  --max-connections N, --max-listener-connections N   connections in all / per listener
  --handshake-timeout-ms N, --idle-timeout-ms N        close silent connections
  --max-partial-frame-bytes N, --max-queued-fetches N  replication memory bounds

Commands:
  ls [DIR] [--at SEQ]       history PATH           cat PATH [--at N]
  log [--since SEQ]         restore PATH --at N    restore --to SEQ|TIME [PATH...]
  status                    conflicts              sync --wait | start | stop | status
  sync resolve PATH --keep local|upstream|merged
  snapshot ACTION --path P [--destination D]       snapshots   diff ID   rollback ID
  verify                    txn begin|commit|rollback
  checkpoint                rehydrate              config      wire decode|encode
  diff PATH --from N [--to M]    diff SNAPSHOT_ID [--patch]    (--from makes it a path)
  watch [--since SEQ] [--path PREFIX] [--origin ORIGIN]       live tail of iterations
  mcp                       the MCP server (stdio) of the running Chronicle, for agents
  ui [--open]               the timeline web UI on a loopback address with a one-time token

Each command finds the workspace from the current folder upwards, or takes -C WORKSPACE.
Exit status: 0 success, 1 failure, 2 bad usage.`;
