#!/usr/bin/env bash
# Makes sure the console's browser test (internal/console, TestConsoleInABrowser)
# can start Chromium: chromium on PATH, or else Debian's chromium package is
# installed when running as root with apt-get (as ensure-valkey.sh does for
# the server). Where it cannot be installed it says so and exits 0: that one
# test then skips with a message naming this script.
set -euo pipefail

for bin in chromium chromium-browser google-chrome; do
  if command -v "$bin" >/dev/null 2>&1; then
    exit 0
  fi
done

if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: no chromium on PATH; installing Debian's chromium" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends chromium >&2 && exit 0
fi

echo "ensure-chromium: chromium could not be installed (not root, or no apt-get): the console's browser test will skip;" \
  "install chromium (Debian/Ubuntu: apt-get install chromium) to run it" >&2
exit 0
