#!/bin/sh
# Start command of Chronicle's E2B template (e2b.toml): keeps /workspace a replica of the
# agent named by CHRONICLE_AGENT_URL, authenticated with CHRONICLE_TOKEN.
#
# E2B runs the start command once, while building the template, and snapshots it running:
# variables given to Sandbox.create() never reach it. So when CHRONICLE_AGENT_URL (or
# CHRONICLE_WS_CONNECT / CHRONICLE_CONNECT) is not set, this waits for an env file, by
# default /etc/chronicle/agent.env, holding CHRONICLE_* lines such as
#   CHRONICLE_AGENT_URL=wss://agent.example:3002
#   CHRONICLE_TOKEN=...
# which the orchestrator writes after creating the sandbox (write it to a temp name in the
# same folder, then rename it, so it is never read half-written). Other lines are ignored.
# Then it execs chronicle-sandbox with its own arguments.
#
# Environment: CHRONICLE_ENV_FILE (the env file), CHRONICLE_E2B_MARKER (touched once
# started, for the template's ready_cmd), CHRONICLE_BINARY (the sandbox binary),
# CHRONICLE_ENV_POLL_SECONDS (how often to look for the env file).
set -eu

env_file="${CHRONICLE_ENV_FILE:-/etc/chronicle/agent.env}"
marker="${CHRONICLE_E2B_MARKER:-/tmp/chronicle-e2b.started}"
binary="${CHRONICLE_BINARY:-/usr/local/bin/chronicle-sandbox}"
poll="${CHRONICLE_ENV_POLL_SECONDS:-0.2}"

say() {
  printf 'chronicle-e2b-start: %s\n' "$1" >&2
}

load_env_file() {
  while IFS= read -r line || [ -n "$line" ]; do
    case "$line" in
      '' | '#'*) continue ;;
      CHRONICLE_*=*) ;;
      *)
        say "ignoring a line of $env_file that sets no CHRONICLE_ variable"
        continue
        ;;
    esac
    key="${line%%=*}"
    value="${line#*=}"
    case "$key" in
      *[!A-Z0-9_]*)
        say "ignoring \"$key\" in $env_file: not a variable name"
        continue
        ;;
    esac
    # Accept KEY="value" and KEY='value' as people write them.
    case "$value" in
      \"*\")
        value="${value#\"}"
        value="${value%\"}"
        ;;
      \'*\')
        value="${value#\'}"
        value="${value%\'}"
        ;;
    esac
    export "$key=$value"
  done <"$env_file"
}

: >"$marker"
if [ -z "${CHRONICLE_AGENT_URL:-}" ] && [ -z "${CHRONICLE_WS_CONNECT:-}" ] && [ -z "${CHRONICLE_CONNECT:-}" ]; then
  say "waiting for $env_file"
  while [ ! -s "$env_file" ]; do
    sleep "$poll"
  done
  load_env_file
  say "loaded $env_file"
fi
exec "$binary" "$@"
