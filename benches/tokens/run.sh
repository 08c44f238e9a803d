#!/usr/bin/env bash
# The token table of BENCHMARKS.md, measured in one run: our export of the reference
# tools per target, the same tools defined with rmcp (#[tool] + schemars) and with
# FastMCP (pydantic), each list counted with the same o200k tokenizer.
#
#   bash benches/tokens/run.sh            # from the repository root
#
# Needs network access to PyPI the first time (FastMCP goes into a virtual environment
# under target/tokens/venv). Not run by CI.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=target/tokens
mkdir -p "$out"

# (c) ours: the reference tools as `dsh-tools export` prints them.
cargo build -q -p dsh-tools --bin dsh-tools
for target in openai openai-strict anthropic anthropic-strict gemini gemini-openapi mcp mcp-2026-07-28; do
  target/debug/dsh-tools --root dsh-tools export --provider "$target" > "$out/ours-$target.json" 2> "$out/ours-$target.warnings"
done

# (a) rmcp: the `tools/list` result of the same tools as an rmcp server.
cargo run -q -p dsh-benches --features peers --example rmcp_tool_list > "$out/rmcp.json"

# (b) FastMCP: the same, as a FastMCP server.
if [ ! -x "$out/venv/bin/python" ]; then
  python3 -m venv "$out/venv"
fi
if ! "$out/venv/bin/python" -c 'import fastmcp' 2> /dev/null; then
  "$out/venv/bin/pip" install -q fastmcp
fi
"$out/venv/bin/python" benches/tokens/fastmcp_tools.py > "$out/fastmcp.json"

# (d) the table, with what produced it.
rmcp_version=$(awk '/^name = "rmcp"$/ { getline; print $3 }' Cargo.lock | tr -d '"')
schemars_version=$(awk '/^name = "schemars"$/ { getline; print $3 }' Cargo.lock | tr -d '"')
tiktoken_version=$(awk '/^name = "tiktoken-rs"$/ { getline; print $3 }' Cargo.lock | tr -d '"')
py_versions=$("$out/venv/bin/python" -c 'import importlib.metadata as m, sys; print("Python %d.%d.%d, FastMCP %s, mcp %s, pydantic %s" % (sys.version_info[:3] + tuple(m.version(p) for p in ("fastmcp", "mcp", "pydantic"))))')
echo "$(date -u +%Y-%m-%d): o200k_base (tiktoken-rs $tiktoken_version); $(rustc --version | cut -d' ' -f1-2), rmcp $rmcp_version, schemars $schemars_version; $py_versions"
echo
cargo run -q -p dsh-benches --features peers --example token_table -- "$out"
