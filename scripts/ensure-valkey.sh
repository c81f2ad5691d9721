#!/usr/bin/env bash
# Makes sure the tests can start a Valkey/Redis server: valkey-server or
# redis-server on PATH. VALKEY_URL alone is not enough: it only replaces the
# shared standalone server; the cluster run of the lanes suite, the tests
# that start a dedicated server (valkeytest.Start), the Examples and the
# demo always start their own. Otherwise installs Debian's redis-server
# (Redis 7.0, protocol-compatible with Valkey 8) when running as root with
# apt-get, or stops with a message saying what to install.
set -euo pipefail

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
ensure-valkey: the tests need a valkey-server or redis-server binary on PATH and none was found
  (VALKEY_URL is not enough: the cluster suite, dedicated test servers and the Examples start their own).
  Install one, e.g.  sudo apt-get install redis-server   (Debian/Ubuntu)
                     brew install valkey                  (macOS)
MSG
exit 1
