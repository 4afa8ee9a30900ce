#!/bin/sh
# deno task install [--prefix DIR]: puts a `chronicle` launcher in DIR/bin (default ~/.local)
# that runs this checkout's ./chronicle, so `chronicle` works from any folder.
set -eu

prefix="${HOME}/.local"
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) [ $# -ge 2 ] || { echo "install: --prefix needs a folder" >&2; exit 2; }; prefix="$2"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    -h|--help) echo "Usage: deno task install [--prefix DIR]   (writes DIR/bin/chronicle; default DIR ~/.local)"; exit 0 ;;
    *) echo "install: unknown argument '$1'; usage: deno task install [--prefix DIR]" >&2; exit 2 ;;
  esac
done

root="$(cd "$(dirname "$0")/.." && pwd -P)"
bin="${prefix}/bin"
mkdir -p "$bin"
# The checkout's path in single quotes, any single quote in it escaped.
quoted="'$(printf '%s' "$root" | sed "s/'/'\\\\''/g")'"
tmp="${bin}/.chronicle.$$"
{
  echo '#!/bin/sh'
  echo "# Chronicle launcher written by 'deno task install': runs the checkout at ${root}"
  echo "exec ${quoted}/chronicle \"\$@\""
} >"$tmp"
chmod 755 "$tmp"
mv -f "$tmp" "${bin}/chronicle"
echo "installed ${bin}/chronicle (runs ${root}/chronicle)"
case ":${PATH}:" in
  *":${bin}:"*) ;;
  *) echo "${bin} is not on PATH: add it with  export PATH=\"${bin}:\$PATH\"" ;;
esac
