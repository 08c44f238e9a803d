#!/usr/bin/env bash
# Instructions per call of our Streamable HTTP server and rmcp's, serving the same tools
# (benches/examples/http_load.rs, release): each server runs under callgrind, warms up
# with 100 sequential calls, then the counters are zeroed, N calls are sent on one
# connection (calls.py, every answer checked) and the counts dumped. Instruction counts
# repeat exactly for the same build and inputs, whatever else the machine is doing, so
# the table can be made on a busy machine where timings cannot. The cache simulation
# (valgrind's model of the level-1 caches, 32 KiB each) counts the misses per call: the
# cost instruction counts do not show.
# Usage: benches/http_load/instructions.sh [N, default 500]   (needs valgrind)
set -euo pipefail
cd "$(dirname "$0")/../.."
n="${1:-500}"
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 1; }
cargo build --release --locked -q -p dsh-benches --features peers --example http_load
bin="${CARGO_TARGET_DIR:-target}/release/examples/http_load"
here=benches/http_load
out="$(mktemp -d)"
trap 'rm -rf "$out"; kill $(jobs -p) 2>/dev/null || true' EXIT
for which in ours rmcp; do
  valgrind --tool=callgrind --cache-sim=yes --compress-strings=no --compress-pos=no \
    --callgrind-out-file="$out/$which" "$bin" "$which" >"$out/$which.url" 2>"$out/$which.log" &
  pid=$!
  url=""
  for _ in $(seq 600); do
    url="$(sed -n 's/^URL //p' "$out/$which.url")"
    [ -n "$url" ] && break
    sleep 0.1
  done
  [ -n "$url" ] || { echo "$which did not start" >&2; exit 1; }
  python3 "$here/calls.py" "$url" 100
  callgrind_control -z "$pid" >/dev/null
  python3 "$here/calls.py" "$url" "$n"
  callgrind_control -d "$pid" >/dev/null
  kill "$pid"; wait "$pid" 2>/dev/null || true
  python3 "$here/profile.py" "$out/$which.1" "$n" >"$out/$which.table"
done
python3 - "$out/ours.table" "$out/rmcp.table" <<'PY'
import sys
def load(path):
    rows = {}
    for line in open(path):
        kind, rest = line.split(" ", 1)
        if kind == "total":
            rows[("total", "")] = int(rest)
        else:
            label, value = rest.rsplit("\t", 1)
            rows[(kind, label)] = int(value)
    return rows
ours, rmcp = load(sys.argv[1]), load(sys.argv[2])
print("| per call | ours | rmcp |")
print("|---|---|---|")
keys = [("total", "")] + sorted({k for k in ours | rmcp if k[0] == "step"}, key=lambda k: -max(ours.get(k, 0), rmcp.get(k, 0)))
keys += sorted({k for k in ours | rmcp if k[0] == "group"}, key=lambda k: -max(ours.get(k, 0), rmcp.get(k, 0)))
keys += sorted({k for k in ours | rmcp if k[0] == "miss"}, key=lambda k: (not k[1].endswith("all"), -max(ours.get(k, 0), rmcp.get(k, 0))))
for k in keys:
    name = {"total": "instructions, all", "step": f"instructions: {k[1]}", "group": f"instructions, self: {k[1]}", "miss": k[1]}[k[0]]
    f = lambda v: f"{v:,}" if v is not None else "-"
    print(f"| {name} | {f(ours.get(k))} | {f(rmcp.get(k))} |")
PY
