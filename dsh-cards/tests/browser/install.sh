#!/usr/bin/env bash
# What the real-browser test of the card renderer (dsh-cards/tests/browser.rs) needs:
# Debian's Chromium (/usr/bin/chromium) and playwright-core (npm) under
# target/browser-node. Idempotent: installs only what is missing, then fails unless both
# are there. The browser tests run it first; CI runs it before the tests as well.
set -euo pipefail
cd "$(dirname "$0")/../../.."

PLAYWRIGHT_VERSION=1.65.2
PREFIX=${CARGO_TARGET_DIR:-$PWD/target}/browser-node

CHROMIUM=${DSH_CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ]; then
  echo "== installing chromium (Debian)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
fi

if [ "$(cat "$PREFIX/.installed" 2>/dev/null)" != "playwright-core@$PLAYWRIGHT_VERSION" ]; then
  echo "== installing playwright-core $PLAYWRIGHT_VERSION into $PREFIX"
  mkdir -p "$PREFIX"
  [ -f "$PREFIX/package.json" ] || echo '{ "private": true }' >"$PREFIX/package.json"
  (cd "$PREFIX" && npm install --prefer-offline --save-exact --no-audit --no-fund \
    --loglevel=error "playwright-core@$PLAYWRIGHT_VERSION")
  echo "playwright-core@$PLAYWRIGHT_VERSION" >"$PREFIX/.installed"
fi

[ -x "$CHROMIUM" ] || { echo "$CHROMIUM is missing after the install" >&2; exit 1; }
[ -f "$PREFIX/node_modules/playwright-core/package.json" ] ||
  { echo "playwright-core is missing under $PREFIX after the install" >&2; exit 1; }
