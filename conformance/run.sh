#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance) against the
# everything server of this package (conformance/src/main.rs), at both revisions, and its
# client scenarios against the everything client (conformance/src/bin/everything-client.rs):
#
#   1. installs Node 22 (npm package `node`) and the pinned suite into
#      target/conformance-node once (npm; later runs reuse it, and npm's cache);
#   2. builds and starts `everything-server` on a free port;
#   3. runs the requirement sets of 2025-11-25 and 2026-07-28 (each at its own wire), then
#      each scenario a set runs without scoring (pending ones, the tasks extension) on its
#      own, every run judged against conformance/baseline.yml;
#   4. runs the client requirement sets of both revisions against the everything client
#      (the suite starts a server per scenario and runs the client on its URL), then each
#      client scenario a set runs without scoring (the auth extensions), on its own, judged
#      against the baseline's `client` lists;
#   5. prints the pass counts per revision and stops the server.
#
# It exits non-zero when any run of the suite does: a failure missing from the baseline,
# or a baseline entry that passes now (stale). Results (checks.json per scenario) and the
# suite's full output are kept in target/conformance-results.
#
# Needs npm (any Node on PATH; the suite runs on the Node 22 it installs) and access to
# the npm registry on the first run.
set -euo pipefail
cd "$(dirname "$0")/.."

SUITE_VERSION=0.2.0-alpha.12
NODE_VERSION=22.23.3
TARGET=${CARGO_TARGET_DIR:-$PWD/target}
PREFIX=$TARGET/conformance-node
RESULTS=$TARGET/conformance-results
BASELINE=$PWD/conformance/baseline.yml
HELPER=$PWD/conformance/suite.cjs

install_suite() {
  local want="node@$NODE_VERSION @modelcontextprotocol/conformance@$SUITE_VERSION"
  if [ "$(cat "$PREFIX/.installed" 2>/dev/null)" = "$want" ] &&
    [ -x "$PREFIX/node_modules/.bin/node" ] && [ -e "$PREFIX/node_modules/.bin/conformance" ]; then
    return
  fi
  command -v npm >/dev/null || { echo "conformance: npm is needed to install the suite" >&2; exit 1; }
  echo "== installing Node $NODE_VERSION and the conformance suite $SUITE_VERSION into $PREFIX"
  mkdir -p "$PREFIX"
  [ -f "$PREFIX/package.json" ] || echo '{ "private": true }' >"$PREFIX/package.json"
  # The `node` package's install script fetches the Node binary as another npm package.
  (cd "$PREFIX" && npm install --prefer-offline --save-exact --no-audit --no-fund \
    --loglevel=error "node@$NODE_VERSION" "@modelcontextprotocol/conformance@$SUITE_VERSION")
  local version
  version=$("$PREFIX/node_modules/.bin/node" --version 2>/dev/null) || {
    echo "conformance: npm installed no runnable Node into $PREFIX (did npm skip the install script of package node?)" >&2
    exit 1
  }
  case "$version" in
    v22.*) ;;
    *) echo "conformance: expected Node 22 in $PREFIX, got $version" >&2; exit 1 ;;
  esac
  echo "$want" >"$PREFIX/.installed"
}

install_suite
# The suite's launcher is `#!/usr/bin/env node`: this PATH gives it Node 22.
export PATH="$PREFIX/node_modules/.bin:$PATH"
export CONFORMANCE_NODE_MODULES="$PREFIX/node_modules"

echo "== building the everything server and client"
cargo build -p dsh-conformance --bins --locked

rm -rf "$RESULTS"
mkdir -p "$RESULTS"
server_log=$RESULTS/server.log
PORT=0 "$TARGET/debug/everything-server" 2>"$server_log" &
server_pid=$!
stop_server() {
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
}
trap stop_server EXIT

url=
for _ in $(seq 1 200); do
  url=$(sed -n 's/^serving MCP at //p' "$server_log")
  [ -n "$url" ] && break
  if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "conformance: the everything server exited before serving:" >&2
    cat "$server_log" >&2
    exit 1
  fi
  sleep 0.1
done
[ -n "$url" ] || { echo "conformance: the everything server did not start in 20 s" >&2; cat "$server_log" >&2; exit 1; }
echo "== everything server at $url"

status=0
for rev in 2025-11-25 2026-07-28; do
  node "$HELPER" baseline "$BASELINE" "$rev" >"$RESULTS/baseline-$rev.yml"

  echo "== conformance server --requirements $rev"
  log=$RESULTS/requirements-$rev.log
  if conformance server --url "$url" --requirements "$rev" \
    --expected-failures "$RESULTS/baseline-$rev.yml" -o "$RESULTS/$rev" >"$log" 2>&1; then
    verdict=ok
  else
    verdict=FAILED
    status=1
  fi
  # The summary and the baseline's verdict (the checks of each scenario are in the log).
  sed -n '/=== SUMMARY ===/,$p' "$log" | sed 's/\x1b\[[0-9;]*m//g'
  echo "-- requirements $rev: $verdict (full output: $log)"

  # What the set runs without scoring is outside the verdict above: each such scenario
  # again, on its own, against the same baseline.
  while read -r scenario reason; do
    log=$RESULTS/unscored-$rev-${scenario//\//_}.log
    if conformance server --url "$url" --scenario "$scenario" --spec-version "$rev" --force \
      --expected-failures "$RESULTS/baseline-$rev.yml" >"$log" 2>&1; then
      echo "-- $scenario ($reason, $rev): ok"
    else
      echo "-- $scenario ($reason, $rev): FAILED (full output: $log)"
      sed 's/\x1b\[[0-9;]*m//g' "$log" |
        sed -n '/^Expected failures (in baseline)\|^Stale baseline\|^Unexpected failures/,$p'
      status=1
    fi
  done < <(node "$HELPER" unscored "$rev")
done

client=$TARGET/debug/everything-client
for rev in 2025-11-25 2026-07-28; do
  node "$HELPER" baseline "$BASELINE" "$rev" client >"$RESULTS/baseline-client-$rev.yml"

  echo "== conformance client --requirements $rev"
  log=$RESULTS/client-requirements-$rev.log
  if conformance client --command "$client" --requirements "$rev" \
    --expected-failures "$RESULTS/baseline-client-$rev.yml" -o "$RESULTS/client-$rev" >"$log" 2>&1; then
    verdict=ok
  else
    verdict=FAILED
    status=1
  fi
  sed -n '/=== SUITE SUMMARY ===/,$p' "$log" | sed 's/\x1b\[[0-9;]*m//g' |
    sed -n '/^Total\|^Expected failures\|^Stale baseline\|^Unexpected failures/,$p'
  echo "-- client requirements $rev: $verdict (full output: $log)"

  while read -r scenario reason; do
    log=$RESULTS/client-unscored-$rev-${scenario//\//_}.log
    if conformance client --command "$client" --scenario "$scenario" --spec-version "$rev" --force \
      --expected-failures "$RESULTS/baseline-client-$rev.yml" >"$log" 2>&1; then
      echo "-- client $scenario ($reason, $rev): ok"
    else
      echo "-- client $scenario ($reason, $rev): FAILED (full output: $log)"
      sed 's/\x1b\[[0-9;]*m//g' "$log" |
        sed -n '/^Expected failures (in baseline)\|^Stale baseline\|^Unexpected failures/,$p'
      status=1
    fi
  done < <(node "$HELPER" unscored "$rev" client)
done

echo "== pass counts (a scenario passes when none of its checks fails or warns)"
for rev in 2025-11-25 2026-07-28; do
  node "$HELPER" summary "$rev" "$RESULTS/$rev"
done
for rev in 2025-11-25 2026-07-28; do
  node "$HELPER" summary "$rev" "$RESULTS/client-$rev" client
done
if [ "$status" = 0 ]; then
  echo "== conformance: every failure is in conformance/baseline.yml, and every entry still fails"
else
  echo "== conformance: FAILED (an unexpected failure, or a baseline entry that passes now)" >&2
fi
exit "$status"
