#!/usr/bin/env bash
# Makes sure the tests can start a Valkey/Redis server and says which one
# they run on ("tests run on valkey-server 8.0.1 (/path)"; the first
# argument replaces "tests", e.g. "benchmarks"). It looks where
# internal/valkeyserver looks, in the same order:
#   1. valkey-server in $VALKEY_BIN_DIR, by default the Valkey build provided
#      beside the checkout: <repository top>/../shared/valkey/bin;
#   2. valkey-server on PATH;
#   3. redis-server on PATH.
# With none of them it installs Debian's redis-server (Redis 7.0,
# protocol-compatible with Valkey 8) when running as root with apt-get, or
# stops with a message saying what to install. VALKEY_URL alone is not
# enough: it only replaces the shared standalone server; the cluster runs,
# the tests that start a dedicated server (valkeytest.Start), the Examples
# and the demo always start their own.
set -euo pipefail
what="${1:-tests}"

find_server() {
  local dir="${VALKEY_BIN_DIR-}"
  if [ -z "${VALKEY_BIN_DIR+set}" ]; then
    local top
    if top="$(git rev-parse --show-toplevel 2>/dev/null)"; then
      dir="$(dirname "$top")/shared/valkey/bin"
    fi
  fi
  if [ -n "$dir" ] && [ -f "$dir/valkey-server" ] && [ -x "$dir/valkey-server" ]; then
    echo "$dir/valkey-server"
    return 0
  fi
  command -v valkey-server || command -v redis-server
}

# say_server names the binary and its version; fails when it does not run.
say_server() {
  local bin="$1" out name version
  out="$("$bin" --version)" || { echo "ensure-valkey: $bin --version failed" >&2; return 1; }
  version="$(sed -n 's/.* v=\([^ ]*\).*/\1/p' <<<"$out")"
  [ -n "$version" ] || { echo "ensure-valkey: no version in \"$out\" from $bin" >&2; return 1; }
  case "$out" in
    [Vv]alkey*) name=valkey-server ;;
    *) name=redis-server ;;
  esac
  echo "$what run on $name $version ($bin)"
}

if bin="$(find_server)"; then
  say_server "$bin"
  exit 0
fi

if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-valkey: no valkey-server (nor ../shared/valkey/bin beside the checkout) or redis-server; installing Debian's redis-server" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends redis-server redis-tools >&2
  # The package may try to start a system service; the tests start their own.
  if bin="$(find_server)"; then
    say_server "$bin"
    exit 0
  fi
fi

cat >&2 <<'MSG'
ensure-valkey: the tests need a valkey-server or redis-server binary and none was found
  (looked in $VALKEY_BIN_DIR or ../shared/valkey/bin beside the checkout, then on PATH;
  VALKEY_URL is not enough: the cluster suite, dedicated test servers and the Examples start their own).
  Install one, e.g.  sudo apt-get install redis-server   (Debian/Ubuntu)
                     brew install valkey                  (macOS)
MSG
exit 1
