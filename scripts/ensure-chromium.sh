#!/usr/bin/env bash
# Makes sure the console's browser test (internal/console, TestConsoleInABrowser)
# can start Chromium: chromium on PATH, or else Debian's chromium package is
# installed when running as root with apt-get (as ensure-valkey.sh does for
# the server). Where it cannot be installed it says so and exits 0: that one
# test then skips with a message naming this script.
set -euo pipefail

# The emoji font only matters to the screenshots (the bot's answers start
# with emojis); the test passes without it.
have_font() { ! command -v fc-list >/dev/null 2>&1 || fc-list | grep -qi "emoji"; }

for bin in chromium chromium-browser google-chrome; do
  if command -v "$bin" >/dev/null 2>&1 && have_font; then
    exit 0
  fi
done

if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: installing Debian's chromium and fonts-noto-color-emoji" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends chromium fonts-noto-color-emoji >&2 && exit 0
fi

for bin in chromium chromium-browser google-chrome; do
  if command -v "$bin" >/dev/null 2>&1; then
    exit 0 # without the emoji font: the screenshots show boxes for emojis
  fi
done

echo "ensure-chromium: chromium could not be installed (not root, or no apt-get): the console's browser test will skip;" \
  "install chromium (Debian/Ubuntu: apt-get install chromium) to run it" >&2
exit 0
