#!/usr/bin/env python3
"""Compile-time bench: 100 tools written with dsh-runtime's `#[tool]` vs rmcp's macros.

Generates two crates outside the workspace (in a temporary directory unless --dir is
given), each with the same 100 tools of 3 documented parameters (`path: String`,
`limit: Option<u64>`, `recursive: bool`) in one `src/lib.rs`:

- `tools_dsh`: `#[dsh_runtime::tool]` on free `async fn`s, plus `pub fn tools()`
  collecting the 100 tools as `DynTool`s (what a host registers); dsh-runtime is a path
  dependency on this repository.
- `tools_rmcp`: one `#[tool_router] impl Server` with 100 `#[tool]` methods taking
  `Parameters<ToolNnnArgs>` (structs deriving `Deserialize` and `schemars::JsonSchema`,
  fields documented), and `#[tool_handler] impl ServerHandler for Server` (rmcp 3.x from
  crates.io).

Each crate has its own target directory, kept across repetitions, so dependencies are
built once (a warm-up build) and never again. Then, `--reps` times, alternating which
crate goes first:

- clean: `cargo clean -p <crate>` then `cargo build` (dev profile): the crate alone;
- incremental: edit the body of one tool (tool 50) and `cargo build` again.

Reports the median wall time of each and the ratio to rmcp (also per repetition, since
the machine may be shared). With --module-layout a third crate, `tools_dsh_modules`, puts
each of our tools in its own private module (re-exported), to show how much of the
incremental time is the layout: rustc codegens per module, so with every tool in one
module an edit to one body re-codegens the code generated for all of them. Both crates reuse this repository's `Cargo.lock` and
`rust-toolchain.toml`, so they build against the same dependency versions and compiler.

Usage:
    python3 benches/compile/run.py [--reps 5] [--tools 100] [--dir DIR] [--release]
                                   [--module-layout] [--keep]

Python 3 standard library only.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EDITED_TOOL = 50

DOC_PATH = "The path to act on, absolute or relative to the working directory."
DOC_LIMIT = "At most this many entries; all of them when omitted."
DOC_RECURSIVE = "Whether to descend into subdirectories."


def tool_doc(i: int) -> str:
    return f"Tool number {i}: inspect a path and report what was found."


def body(i: int, edit: int) -> str:
    # The edit counter changes a literal, so every incremental build has real work.
    return f'format!("{i}/{edit} {{path}} {{limit:?}} {{recursive}}")'


def gen_dsh(n: int, edit: int) -> str:
    out = [f"//! {n} tools written with dsh-runtime's `#[tool]` (generated).", "",
           "use dsh_runtime::{DynTool, tool};", ""]
    for i in range(n):
        out += [
            f"/// {tool_doc(i)}",
            "#[tool]",
            f"pub async fn tool_{i:03}(",
            f"    /// {DOC_PATH}",
            "    path: String,",
            f"    /// {DOC_LIMIT}",
            "    limit: Option<u64>,",
            f"    /// {DOC_RECURSIVE}",
            "    recursive: bool,",
            ") -> String {",
            f"    {body(i, edit if i == EDITED_TOOL else 0)}",
            "}",
            "",
        ]
    out += ["/// Every tool of this crate, ready to register.",
            "pub fn tools() -> Vec<DynTool> {", "    vec!["]
    out += [f"        DynTool::new(Tool{i:03})," for i in range(n)]
    out += ["    ]", "}", ""]
    return "\n".join(out)


def gen_dsh_modules(n: int, edit: int) -> str:
    """The same tools as `gen_dsh`, each in its own private module (re-exported)."""
    out = [f"//! {n} tools written with dsh-runtime's `#[tool]`, one module each (generated).", "",
           "use dsh_runtime::DynTool;", ""]
    for i in range(n):
        out += [
            f"mod m{i:03} {{",
            "    use dsh_runtime::tool;",
            "",
            f"    /// {tool_doc(i)}",
            "    #[tool]",
            f"    pub async fn tool_{i:03}(",
            f"        /// {DOC_PATH}",
            "        path: String,",
            f"        /// {DOC_LIMIT}",
            "        limit: Option<u64>,",
            f"        /// {DOC_RECURSIVE}",
            "        recursive: bool,",
            "    ) -> String {",
            f"        {body(i, edit if i == EDITED_TOOL else 0)}",
            "    }",
            "}",
            f"pub use m{i:03}::*;",
            "",
        ]
    out += ["/// Every tool of this crate, ready to register.",
            "pub fn tools() -> Vec<DynTool> {", "    vec!["]
    out += [f"        DynTool::new(Tool{i:03})," for i in range(n)]
    out += ["    ]", "}", ""]
    return "\n".join(out)


def gen_rmcp(n: int, edit: int) -> str:
    out = [f"//! {n} tools written with rmcp's `#[tool_router]`/`#[tool]` (generated).", "",
           "use rmcp::handler::server::router::tool::ToolRouter;",
           "use rmcp::handler::server::wrapper::Parameters;",
           "use rmcp::{ServerHandler, tool, tool_handler, tool_router};", ""]
    for i in range(n):
        out += [
            f"/// Arguments of `tool_{i:03}`.",
            "#[derive(serde::Deserialize, schemars::JsonSchema)]",
            f"pub struct Tool{i:03}Args {{",
            f"    /// {DOC_PATH}",
            "    pub path: String,",
            f"    /// {DOC_LIMIT}",
            "    pub limit: Option<u64>,",
            f"    /// {DOC_RECURSIVE}",
            "    pub recursive: bool,",
            "}",
            "",
        ]
    out += ["/// The server holding every tool.", "#[derive(Clone)]", "pub struct Server {",
            "    tool_router: ToolRouter<Server>,", "}", "",
            "impl Default for Server {", "    fn default() -> Self {",
            "        Server { tool_router: Self::tool_router() }", "    }", "}", "",
            "#[tool_router]", "impl Server {"]
    for i in range(n):
        out += [
            f"    /// {tool_doc(i)}",
            "    #[tool]",
            f"    async fn tool_{i:03}(",
            "        &self,",
            f"        Parameters(Tool{i:03}Args {{ path, limit, recursive }}): Parameters<Tool{i:03}Args>,",
            "    ) -> String {",
            f"        {body(i, edit if i == EDITED_TOOL else 0)}",
            "    }",
            "",
        ]
    out += ["}", "", "#[tool_handler(router = self.tool_router)]",
            "impl ServerHandler for Server {}", ""]
    return "\n".join(out)


def manifest(name: str, deps: str) -> str:
    return (f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2024"\n'
            f'publish = false\n\n[dependencies]\n{deps}\n\n[workspace]\n')


DSH_DEP = f'dsh-runtime = {{ path = "{REPO / "dsh-runtime"}" }}'
CRATES = {
    "ours": ("tools_dsh", gen_dsh, DSH_DEP),
    "rmcp": ("tools_rmcp", gen_rmcp,
             'rmcp = { version = "3.11", default-features = false, features = ["server", "macros"] }\n'
             'schemars = "1"\n'
             'serde = { version = "1", features = ["derive"] }'),
}
# Informational variant (--module-layout): ours with one module per tool.
MODULES = ("tools_dsh_modules", gen_dsh_modules, DSH_DEP)


def setup(base: Path, key: str, n: int) -> Path:
    name, gen, deps = CRATES[key]
    d = base / name
    (d / "src").mkdir(parents=True, exist_ok=True)
    (d / "Cargo.toml").write_text(manifest(name, deps))
    shutil.copy(REPO / "Cargo.lock", d / "Cargo.lock")
    shutil.copy(REPO / "rust-toolchain.toml", d / "rust-toolchain.toml")
    (d / "src" / "lib.rs").write_text(gen(n, 0))
    return d


def cargo(d: Path, args: list, release: bool) -> float:
    env = dict(os.environ, CARGO_TARGET_DIR=str(d / "target"))
    cmd = ["cargo", *args] + (["--release"] if release and args[0] == "build" else [])
    if args[0] == "clean" and release:
        cmd.append("--release")
    t0 = time.monotonic()
    r = subprocess.run(cmd, cwd=d, env=env, capture_output=True, text=True)
    dt = time.monotonic() - t0
    if r.returncode != 0:
        sys.stderr.write(r.stderr[-6000:])
        raise SystemExit(f"`{' '.join(cmd)}` failed in {d}")
    return dt


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--tools", type=int, default=100)
    ap.add_argument("--dir", type=Path, help="where to generate (default: a fresh temp dir, removed after)")
    ap.add_argument("--release", action="store_true", help="build with --release instead of the dev profile")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir")
    ap.add_argument("--module-layout", action="store_true",
                    help="also measure ours with each tool in its own module (informational)")
    args = ap.parse_args()
    if args.module_layout:
        CRATES["ours_modules"] = MODULES

    base = args.dir or Path(tempfile.mkdtemp(prefix="dsh-compile-bench-"))
    base.mkdir(parents=True, exist_ok=True)
    if REPO in base.resolve().parents:
        raise SystemExit("--dir must be outside the repository")
    print(f"generating in {base}", file=sys.stderr)
    dirs = {k: setup(base, k, args.tools) for k in CRATES}

    for k, d in dirs.items():
        print(f"warm-up build of {CRATES[k][0]} (dependencies)...", file=sys.stderr, flush=True)
        cargo(d, ["build"], args.release)

    times = {k: {"clean": [], "incremental": []} for k in CRATES}
    edit = 0
    for rep in range(args.reps):
        order = list(CRATES) if rep % 2 == 0 else list(reversed(CRATES))
        edit += 1
        for k in order:
            name, gen, _ = CRATES[k]
            d = dirs[k]
            cargo(d, ["clean", "-p", name], args.release)
            clean = cargo(d, ["build"], args.release)
            (d / "src" / "lib.rs").write_text(gen(args.tools, edit))
            incr = cargo(d, ["build"], args.release)
            times[k]["clean"].append(clean)
            times[k]["incremental"].append(incr)
            print(f"rep {rep + 1}/{args.reps} {k}: clean {clean:.2f}s, incremental {incr:.2f}s",
                  file=sys.stderr, flush=True)

    rustc = subprocess.run(["rustc", "--version"], cwd=dirs["ours"], capture_output=True, text=True).stdout.strip()
    profile = "release" if args.release else "dev"
    print(f"\n{args.tools} tools x 3 documented params, {profile} profile, {args.reps} reps, {rustc}\n")
    print("| build | crate | median | x/rmcp (median of per-rep ratios) | per-rep ratios |")
    print("|---|---|---|---|---|")
    for kind in ("clean", "incremental"):
        r = times["rmcp"][kind]
        for k in CRATES:
            o = times[k][kind]
            ratios = [a / b for a, b in zip(o, r)]
            print(f"| {kind} | {CRATES[k][0]} | {statistics.median(o):.2f} s | "
                  f"{statistics.median(ratios):.2f} | {', '.join(f'{x:.2f}' for x in ratios)} |")

    if args.dir is None and not args.keep:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
