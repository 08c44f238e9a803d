//! Shared by the SDK type-check tests: the tool set (the host's tools plus tools with
//! shapes the host lacks) and the toolchains, installed on first use into
//! `target/sdk-check/` (npm `typescript`, a Python virtual environment with mypy).
//! Installation failures fail the test with what is missing; nothing is skipped.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use dsh_runtime::json;
use dsh_runtime::schema::Schema;
use dsh_runtime::{Tool, ToolDefinition, ToolSchema, tool};
use dsh_tools::host::Host;

/// How a record is matched.
#[derive(serde::Deserialize, serde::Serialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Mode {
    /// Prefix match.
    Fast,
    /// Full scan.
    Slow,
}

/// One filter.
#[derive(serde::Deserialize, ToolSchema)]
pub(crate) struct Filter {
    /// Field to match.
    pub field: String,
    /// Accepted values.
    pub values: Vec<String>,
    /// At most this many.
    pub limit: Option<u32>,
}

/// One hit.
#[derive(serde::Serialize, ToolSchema)]
pub(crate) struct Hit {
    /// The record id.
    pub id: u64,
    /// Relevance.
    pub score: f64,
    /// Tags of the record.
    pub tags: Vec<String>,
    /// A note, when there is one.
    pub note: Option<String>,
}

/// What a search found.
#[derive(serde::Serialize, ToolSchema)]
pub(crate) struct SearchOutput {
    /// The hits, best first.
    pub hits: Vec<Hit>,
    /// How many matched in all.
    pub total: u64,
    /// The mode used.
    pub mode: Mode,
}

/// Search records.
#[tool(read_only)]
pub(crate) async fn search_records(
    /// Query text.
    query: String,
    /// How to match (default: fast).
    mode: Option<Mode>,
    /// Filters, all of which must hold.
    filters: Vec<Filter>,
    /// Weight per field.
    weights: HashMap<String, f64>,
) -> SearchOutput {
    let _ = (query, filters, weights);
    SearchOutput {
        hits: Vec::new(),
        total: 0,
        mode: mode.unwrap_or(Mode::Fast),
    }
}

/// A tool whose name and keys are not identifiers, from raw JSON Schema.
pub(crate) fn odd_tool() -> ToolDefinition {
    let params = json::parse(
        r#"{"type":"object","properties":{
            "x y":{"type":"integer","description":"A key with a space."},
            "class":{"type":"string","description":"A keyword key."},
            "ratio":{"type":"number","enum":[0.5,1.5]}
        },"required":["x y"]}"#,
    )
    .expect("json");
    let output = json::parse(
        r#"{"oneOf":[{"type":"string"},{"type":"array","items":{"oneOf":[{"type":"integer"},{"type":"null"}]}}]}"#,
    )
    .expect("json");
    ToolDefinition::new(
        "odd-name",
        "A tool */ with an awkward name and \"quotes\".",
        Arc::new(Schema::parameters_from_json_schema(&params).expect("params")),
        Arc::new(Schema::from_json_schema(&output).expect("output")),
    )
}

/// The host's tools, `search_records` and `odd-name`.
pub(crate) fn definitions() -> Vec<ToolDefinition> {
    let host = Host::new(env!("CARGO_MANIFEST_DIR")).expect("host");
    let mut defs = host.registry().view().definitions();
    defs.push(SearchRecords.definition().clone());
    defs.push(odd_tool());
    defs
}

/// `target/sdk-check`.
pub(crate) fn cache() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let dir = tmp.parent().unwrap_or(tmp).join("sdk-check");
    std::fs::create_dir_all(&dir).expect("create target/sdk-check");
    dir
}

static INSTALL: Mutex<()> = Mutex::new(());

fn run(cmd: &mut Command, what: &str) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot start {:?}: {e}", cmd.get_program()));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The TypeScript compiler's entry script, installed on first use.
pub(crate) fn tsc() -> PathBuf {
    let _guard = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = cache();
    let tsc = dir.join("node_modules/typescript/bin/tsc");
    if !tsc.exists() {
        run(
            Command::new("npm")
                .args([
                    "install",
                    "--no-audit",
                    "--no-fund",
                    "--no-save",
                    "--prefix",
                ])
                .arg(&dir)
                .arg("typescript@5"),
            "installing the npm package `typescript` into target/sdk-check (needs node, npm and the npm registry)",
        );
    }
    assert!(tsc.exists(), "typescript is not at {}", tsc.display());
    tsc
}

/// The virtual environment's Python, with mypy installed on first use.
pub(crate) fn python_with_mypy() -> PathBuf {
    let _guard = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    let venv = cache().join("venv");
    let python = venv.join("bin/python");
    if !python.exists() {
        run(
            Command::new("python3").args(["-m", "venv"]).arg(&venv),
            "creating a Python virtual environment in target/sdk-check/venv (needs python3 with venv)",
        );
    }
    let probe = Command::new(&python)
        .args(["-c", "import mypy"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !probe {
        run(
            Command::new(&python).args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "mypy",
            ]),
            "installing mypy into target/sdk-check/venv (needs pip and PyPI)",
        );
    }
    python
}

/// A fresh case directory under `target/sdk-check/cases`.
pub(crate) fn case_dir(lang: &str, name: &str) -> PathBuf {
    let dir = cache().join("cases").join(lang).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("case dir");
    dir
}
