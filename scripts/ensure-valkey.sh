#!/usr/bin/env bash
# Makes sure the tests can have a Valkey/Redis server: VALKEY_URL set, or
# valkey-server / redis-server on PATH. Otherwise installs Debian's
# redis-server (Redis 7.0, protocol-compatible with Valkey 8) when running as
# root with apt-get, or stops with a message saying what to install.
set -euo pipefail

if [ -n "${VALKEY_URL:-}" ]; then
  echo "ensure-valkey: using VALKEY_URL"
  exit 0
fi
for bin in valkey-server redis-server; do
  if command -v "$bin" >/dev/null 2>&1; then
    exit 0
  fi
done

if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-valkey: no valkey-server/redis-server on PATH; installing Debian's redis-server" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends redis-server redis-tools >&2
  # The package may try to start a system service; the tests start their own.
  command -v redis-server >/dev/null 2>&1 && exit 0
fi

cat >&2 <<'MSG'
ensure-valkey: the tests need a Valkey or Redis server and none was found.
  Install one, e.g.  sudo apt-get install redis-server   (Debian/Ubuntu)
                     brew install valkey                  (macOS)
  or point the tests at a running server:  VALKEY_URL=redis://127.0.0.1:6379/0 make test
MSG
exit 1
