#!/usr/bin/env bash
# Run every fuzz target for a bounded time: `fuzz/run.sh SECONDS` (default 20 per target).
# Installs cargo-fuzz on first use. Exits non-zero as soon as a target finds a failure;
# the failing input is kept under fuzz/artifacts/<target>/.
set -euo pipefail
cd "$(dirname "$0")"

seconds="${1:-20}"
# cargo-fuzz passes nightly-only flags (sanitizers); the pinned stable toolchain accepts
# them with RUSTC_BOOTSTRAP.
export RUSTC_BOOTSTRAP=1

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "== installing cargo-fuzz"
    cargo install cargo-fuzz --locked
fi

targets=(parse execute validate)
echo "== building fuzz targets"
cargo fuzz build
for t in "${targets[@]}"; do
    echo "== fuzz $t for ${seconds}s"
    mkdir -p "corpus/$t"
    dirs=("corpus/$t")
    flags=(-max_total_time="$seconds" -max_len=4096 -rss_limit_mb=2048 -print_final_stats=1)
    # New inputs go to corpus/<target> (kept between runs, not committed); seeds/ is read.
    if [ -d "seeds/$t" ]; then dirs+=("seeds/$t"); fi
    if [ -f "$t.dict" ]; then flags+=(-dict="$t.dict"); fi
    cargo fuzz run "$t" "${dirs[@]}" -- "${flags[@]}"
done
echo "== fuzz: all targets ran ${seconds}s without failures"
