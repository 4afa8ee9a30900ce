#!/usr/bin/env bash
# Lints Dockerfile.agent and Dockerfile.sandbox with dockerlinter (npm registry; it checks
# Docker's best practices and runs ShellCheck over every RUN), and deploy/*.sh with
# ShellCheck (Debian's package). Installs both when missing. Exits non-zero on any finding,
# whatever its level.
set -euo pipefail
cd "$(dirname "$0")/.."

LINTER_VERSION=2.0.0
prefix="${HOME}/.cache/chronicle-dockerlinter-${LINTER_VERSION}"
linter="${prefix}/node_modules/dockerlinter/bin/dockerfilelinter.js"

if ! command -v shellcheck >/dev/null 2>&1; then
  echo "--- installing shellcheck"
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "shellcheck is missing: install Debian's shellcheck package" >&2
    exit 1
  fi
  apt-get update -qq && apt-get install -y -qq shellcheck >/dev/null
fi
if [ ! -f "${linter}" ]; then
  echo "--- installing dockerlinter ${LINTER_VERSION} into ${prefix}"
  # Its install script downloads ShellCheck from outside the npm registry; Debian's is used.
  npm install --silent --ignore-scripts --prefix "${prefix}" "dockerlinter@${LINTER_VERSION}"
fi

status=0
for dockerfile in Dockerfile.agent Dockerfile.sandbox; do
  echo "--- dockerlinter ${dockerfile}"
  node "${linter}" -f "${dockerfile}" -s sh -e info || status=1
done
echo "--- shellcheck deploy/*.sh"
shellcheck deploy/*.sh || status=1
exit "${status}"
