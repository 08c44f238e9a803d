#!/usr/bin/env python3
"""Run the `execute` criterion bench several times and print the ratios for BENCHMARKS.md.

The machine the figures come from is shared and noisy, so absolute times mean little.
Every ratio is computed between two contenders of the *same* run (criterion's median
estimate of each), and the script reports the median of those per-run ratios with their
range. Repeating whole runs spreads each contender over time, so a burst of load from
elsewhere lands on different contenders in different runs.

Usage (from anywhere in the repository):

    python3 benches/report.py                 # 3 runs, 1 s warm-up, 3 s measurement
    python3 benches/report.py --runs 5 --measure 5
    python3 benches/report.py --no-run        # only re-read the last run's estimates

Python 3 standard library only.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

CASES = ["A_valid", "A_invalid", "B_valid", "B_invalid"]
CONTENDERS = [
    "floor_value",
    "floor_text",
    "ours_text_noop",
    "ours_value_noop",
    "ours_serde_noop",
    "ours_text_tokio",
    "rmcp_router_map_noop",
    "rmcp_router_text_noop",
    "rmcp_router_map_tokio",
    "rmcp_handler_map_noop",
    "rmcp_handler_text_noop",
    "rmcp_handler_map_tokio",
]
# The dispatch issue's targets, all from raw text. Per case: ("max", x) means at most x,
# ("min", x) at least x; a case without an entry has no target.
FLOOR = {"A_valid": ("max", 3.0), "B_valid": ("max", 2.0)}
ROUTER = {"A_valid": ("min", 1.5), "B_valid": ("min", 1.5),
          "A_invalid": ("min", 1.0), "B_invalid": ("min", 1.0)}
HANDLER = {case: ("min", 10.0) for case in CASES}
TARGET_LABELS = {
    "ours / floor, raw text": "≤ 3x (A valid), ≤ 2x (B valid)",
    "rmcp ToolRouter::call / ours, raw text": "≥ 1.5x valid, ≥ 1x invalid",
    "rmcp default call_tool / ours, raw text": "≥ 10x",
}
# (label, numerator, denominator, targets per case)
RATIOS = [
    ("ours / floor, raw text", "ours_text_noop", "floor_text", FLOOR),
    ("ours / floor, parsed", "ours_value_noop", "floor_value", {}),
    ("rmcp ToolRouter::call / ours, raw text", "rmcp_router_text_noop", "ours_text_noop", ROUTER),
    ("rmcp ToolRouter::call / ours, parsed", "rmcp_router_map_noop", "ours_value_noop", {}),
    ("rmcp default call_tool / ours, raw text", "rmcp_handler_text_noop", "ours_text_noop", HANDLER),
    ("rmcp default call_tool / ours, parsed", "rmcp_handler_map_noop", "ours_value_noop", {}),
    ("ours: tokio block_on / no-op poll", "ours_text_tokio", "ours_text_noop", {}),
    ("rmcp router: tokio block_on / no-op poll", "rmcp_router_map_tokio", "rmcp_router_map_noop", {}),
    ("rmcp handler: tokio block_on / no-op poll", "rmcp_handler_map_tokio", "rmcp_handler_map_noop", {}),
]


def repo_root() -> Path:
    return Path(__file__).resolve().parent.parent


def target_dir(root: Path) -> Path:
    env = os.environ.get("CARGO_TARGET_DIR")
    if env:
        return Path(env)
    out = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--no-deps"],
        cwd=root, check=True, capture_output=True, text=True,
    ).stdout
    return Path(json.loads(out)["target_directory"])


def read_run(criterion: Path) -> dict:
    """Median estimate (ns) of every case/contender in the last run."""
    out = {}
    for case in CASES:
        for who in CONTENDERS:
            est = criterion / case / who / "new" / "estimates.json"
            if est.exists():
                out[(case, who)] = json.loads(est.read_text())["median"]["point_estimate"]
    return out


def fmt_ns(ns: float) -> str:
    return f"{ns / 1000:.2f} µs" if ns >= 1000 else f"{ns:.0f} ns"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--warm-up", type=float, default=1.0, help="criterion warm-up seconds")
    ap.add_argument("--measure", type=float, default=3.0, help="criterion measurement seconds")
    ap.add_argument("--no-run", action="store_true", help="only read the last run's estimates")
    ap.add_argument("--json", type=Path, help="also write the raw per-run medians here")
    args = ap.parse_args()

    root = repo_root()
    criterion = target_dir(root) / "criterion"
    runs = []
    for i in range(0 if args.no_run else args.runs):
        print(f"== run {i + 1}/{args.runs}", file=sys.stderr, flush=True)
        subprocess.run(
            ["cargo", "bench", "-p", "dsh-benches", "--bench", "execute", "--",
             "--warm-up-time", str(args.warm_up), "--measurement-time", str(args.measure),
             "--noplot"],
            cwd=root, check=True, stdout=subprocess.DEVNULL,
        )
        runs.append(read_run(criterion))
    if args.no_run:
        runs.append(read_run(criterion))

    if args.json:
        args.json.write_text(json.dumps(
            [{f"{c}/{w}": v for (c, w), v in r.items()} for r in runs], indent=1))

    print(f"### Times (median of {len(runs)} runs of criterion's median; absolute, noisy)\n")
    print("| contender | " + " | ".join(CASES) + " |")
    print("|---|" + "---|" * len(CASES))
    for who in CONTENDERS:
        cells = []
        for case in CASES:
            vals = [r[(case, who)] for r in runs if (case, who) in r]
            cells.append(fmt_ns(statistics.median(vals)) if vals else "n/a")
        print(f"| `{who}` | " + " | ".join(cells) + " |")

    print(f"\n### Ratios (median of per-run ratios, [min–max] over {len(runs)} runs)\n")
    print("| ratio | target | " + " | ".join(CASES) + " |")
    print("|---|---|" + "---|" * len(CASES))
    for label, num, den, targets in RATIOS:
        cells = []
        for case in CASES:
            rs = [r[(case, num)] / r[(case, den)] for r in runs
                  if (case, num) in r and (case, den) in r]
            if not rs:
                cells.append("n/a")
                continue
            med = statistics.median(rs)
            cell = f"{med:.2f}x [{min(rs):.2f}–{max(rs):.2f}]"
            if case in targets:
                kind, bound = targets[case]
                met = med <= bound if kind == "max" else med >= bound
                cell += " ✓" if met else " ✗"
            cells.append(cell)
        tgt = TARGET_LABELS.get(label, "")
        print(f"| {label} | {tgt} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
