#!/usr/bin/env bash
# Makes sure the alert rules' tests (internal/deploytest,
# TestAlertRulesPassPromtoolChecksAndUnitTests) can run promtool: promtool
# on PATH (or $PROMTOOL), or else Debian's prometheus package (which ships
# it) is installed when running as root with apt-get, as ensure-valkey.sh
# does for the server. Where it cannot be installed it says so and exits 0:
# that test then skips, or fails with CI set (testkit.SkipOrFail).
set -euo pipefail

say() { echo "alert rules checked with $("$1" --version 2>&1 | head -n 1) ($1)"; }

if [ -n "${PROMTOOL-}" ] && [ -x "$PROMTOOL" ]; then
  say "$PROMTOOL"
  exit 0
fi
if bin="$(command -v promtool)"; then
  say "$bin"
  exit 0
fi

if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-promtool: no promtool; installing Debian's prometheus package (it ships promtool; its service is not started here)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  if apt-get install -y -qq --no-install-recommends prometheus >&2 && bin="$(command -v promtool)"; then
    say "$bin"
    exit 0
  fi
fi

echo "ensure-promtool: promtool could not be installed (not root, or no apt-get): the alert rules' promtool test will skip" \
  "(and fail with CI set); install it (Debian/Ubuntu: apt-get install prometheus) or set PROMTOOL" >&2
exit 0
