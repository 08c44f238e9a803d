#!/usr/bin/env bash
# What the real-browser test of the card renderer (dsh-cards/tests/browser.rs) needs:
# Debian's Chromium (/usr/bin/chromium) and, under target/browser-node, from npm:
# playwright-core, the official MCP Apps host bridge (@modelcontextprotocol/ext-apps, its
# app-bridge entry point, with the exact versions of its peer dependencies) and esbuild,
# which bundles that bridge into one script for the test's host page. Idempotent:
# installs only what is missing, then fails unless everything is there. The browser tests
# run it first; CI runs it before the tests as well.
set -euo pipefail
cd "$(dirname "$0")/../../.."

PLAYWRIGHT_VERSION=1.65.2
PACKAGES=("playwright-core@$PLAYWRIGHT_VERSION" @modelcontextprotocol/ext-apps@2.0.4
  @modelcontextprotocol/client@2.4.0 @modelcontextprotocol/core@2.4.0 zod@4.6.7
  esbuild@0.28.2)
WANT="${PACKAGES[*]}"
PREFIX=${CARGO_TARGET_DIR:-$PWD/target}/browser-node

CHROMIUM=${DSH_CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ]; then
  echo "== installing chromium (Debian)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
fi

if [ "$(cat "$PREFIX/.installed" 2>/dev/null)" != "$WANT" ]; then
  echo "== installing $WANT into $PREFIX"
  mkdir -p "$PREFIX"
  [ -f "$PREFIX/package.json" ] || echo '{ "private": true }' >"$PREFIX/package.json"
  (cd "$PREFIX" && npm install --prefer-offline --save-exact --no-audit --no-fund \
    --loglevel=error "${PACKAGES[@]}")
  echo "$WANT" >"$PREFIX/.installed"
fi

[ -x "$CHROMIUM" ] || { echo "$CHROMIUM is missing after the install" >&2; exit 1; }
for package in playwright-core @modelcontextprotocol/ext-apps esbuild; do
  [ -f "$PREFIX/node_modules/$package/package.json" ] ||
    { echo "$package is missing under $PREFIX after the install" >&2; exit 1; }
done
