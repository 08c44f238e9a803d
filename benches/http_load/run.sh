#!/usr/bin/env bash
# Our Streamable HTTP server against rmcp's, serving the same tools, under an HTTP load
# generator (wrk, Debian's package), on revision 2026-07-28 (stateless), both release
# builds, in one run: one connection of sequential `tools/call`s (latency), then 32
# connections (throughput and p99). The servers run one at a time, alternating, ROUNDS
# times each (default 3); the table gives each figure's median over the rounds.
# Usage: benches/http_load/run.sh [SECONDS per measurement, default 10] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
secs="${1:-10}"
rounds="${2:-3}"
command -v wrk >/dev/null || { echo "needs wrk (apt-get install wrk)" >&2; exit 1; }
cargo build --release --locked -q -p dsh-benches --features peers --example http_load
bin="${CARGO_TARGET_DIR:-target}/release/examples/http_load"
lua="benches/http_load/call.lua"
out="$(mktemp -d)"
trap 'rm -rf "$out"; kill $(jobs -p) 2>/dev/null || true' EXIT

start() {  # which -> sets $pid $url
  "$bin" "$1" >"$out/$1.url" &
  pid=$!
  for _ in $(seq 100); do
    url="$(sed -n 's/^URL //p' "$out/$1.url")"
    [ -n "$url" ] && break
    sleep 0.05
  done
  [ -n "$url" ] || { echo "$1 did not start" >&2; exit 1; }
  # One call by hand: the answer must be a successful call, or the numbers mean nothing.
  local body
  body="$(wrk -t1 -c1 -d1s -s "$lua" "$url" 2>&1 | grep -c 'unexpected answer' || true)"
  [ "$body" = 0 ] || { echo "$1 answers the call wrongly:"; wrk -t1 -c1 -d1s -s "$lua" "$url"; exit 1; } >&2
}

measure() {  # which conns threads -> RESULT line
  wrk -t"$3" -c"$2" -d"${secs}s" --latency -s "$lua" "$url" | sed -n 's/^RESULT //p'
}

for round in $(seq "$rounds"); do
  for which in ours rmcp; do
    start "$which"
    measure "$which" 1 1 | sed "s/^/$which c1 /" >>"$out/results"
    measure "$which" 32 2 | sed "s/^/$which c32 /" >>"$out/results"
    kill "$pid"; wait "$pid" 2>/dev/null || true
  done
  echo "round $round done" >&2
done

python3 - "$out/results" <<'PY'
import sys, statistics, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    which, conns, *kv = line.split()
    rows[(which, conns)].append(dict(x.split('=') for x in kv))
def med(which, conns, key):
    return statistics.median(float(r[key]) for r in rows[(which, conns)])
print("| connections | figure | ours | rmcp | ours / rmcp |")
print("|---|---|---|---|---|")
for conns, figures in (("c1", ("p50_us", "p99_us", "rps")), ("c32", ("rps", "p50_us", "p99_us"))):
    for f in figures:
        o, r = med("ours", conns, f), med("rmcp", conns, f)
        print(f"| {conns[1:]} | {f} | {o:.0f} | {r:.0f} | {o / r:.2f}x |")
errors = sum(float(r["errors"]) for v in rows.values() for r in v)
print(f"\nerrors (non-2xx, socket): {errors:.0f}")
PY
