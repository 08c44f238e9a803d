//! The Python code-mode SDK, checked by its real consumer: `mypy --strict` accepts the
//! generated declarations with a program using `tools.<name>(args)` correctly, and
//! rejects programs that misuse them with the expected errors. The SDK must also parse
//! and import under CPython.
//!
//! mypy is installed on first run into a virtual environment at `target/sdk-check/venv`.

use crate::sdk_check;

use std::process::Command;

use dsh_code::sdk::python;

/// Check the SDK with `program` under `mypy --strict`; success and output.
fn mypy(name: &str, program: &str) -> (bool, String) {
    let py = sdk_check::python_with_mypy();
    let sdk = python::render(&sdk_check::definitions());
    let dir = sdk_check::case_dir("py", name);
    std::fs::write(dir.join("sdk.py"), &sdk.code).expect("write sdk.py");
    std::fs::write(dir.join("program.py"), program).expect("write program.py");
    let out = Command::new(&py)
        .current_dir(&dir)
        .args([
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--cache-dir",
            "/dev/null",
            "--python-version",
            "3.11",
            "--no-error-summary",
            "--show-error-codes",
            "sdk.py",
            "program.py",
        ])
        .output()
        .expect("run mypy");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn correct_program_type_checks() {
    let program = r#"
from sdk import ToolCallError, tools


async def main() -> int:
    g = await tools.grep({"pattern": "fn\\s+main", "include": "*.rs"})
    n = 0
    for m in g["matches"]:
        p: str = m["path"]
        n += m["lineNumber"]
        line: str = m["line"]
    b = await tools.bash({"command": "ls", "description": "list files"})
    if b["kind"] == "foreground":
        out: str = b["stdout"]["text"]
        code = b.get("exitCode")
    else:
        job: str = b["jobId"]
    jobs = await tools.job_list({})
    for j in jobs:
        status: str = j["status"]
    r = await tools.search_records(
        {"query": "q", "mode": "slow", "filters": [{"field": "a", "values": ["b"], "limit": 3}], "weights": {"a": 1.5}}
    )
    total: int = r["total"]
    tags: list[str] = [t for h in r["hits"] for t in h["tags"]]
    try:
        await tools.read({"file_path": "README.md", "offset": 2, "limit": 5})
    except ToolCallError as e:
        who: str = e.toolName
    return n + total
"#;
    let (ok, text) = mypy("correct", program);
    assert!(ok, "mypy rejected the correct program:\n{text}");
}

#[test]
fn misuse_fails_with_the_expected_errors() {
    let head = "from sdk import tools\n\n\nasync def f() -> object:\n";
    let cases = [
        (
            "wrong_type",
            "    return await tools.grep({\"pattern\": 42})\n",
            "program.py:5: error: Incompatible types (expression has type \"int\", TypedDict item \"pattern\" has type \"str\")  [typeddict-item]",
        ),
        (
            "missing_key",
            "    return await tools.bash({\"command\": \"ls\"})\n",
            "program.py:5: error: Missing key \"description\" for TypedDict \"BashArgs\"  [typeddict-item]",
        ),
        (
            "missing_field",
            "    g = await tools.grep({\"pattern\": \"a\"})\n    return g[\"nonexistent\"]\n",
            "program.py:6: error: TypedDict \"GrepOutput\" has no key \"nonexistent\"  [typeddict-item]",
        ),
        (
            "unknown_tool",
            "    return await tools.nope({})\n",
            "program.py:5: error: \"Tools\" has no attribute \"nope\"  [attr-defined]",
        ),
        (
            "wrong_enum",
            "    return await tools.search_records({\"query\": \"q\", \"mode\": \"medium\", \"filters\": [], \"weights\": {}})\n",
            "program.py:5: error: Incompatible types (expression has type \"Literal['medium']\", TypedDict item \"mode\" has type \"Literal['fast', 'slow']\")  [typeddict-item]",
        ),
    ];
    for (name, body, expected) in cases {
        let (ok, text) = mypy(name, &format!("{head}{body}"));
        assert!(!ok, "{name}: mypy accepted a misuse:\n{body}");
        assert!(
            text.contains(expected),
            "{name}: expected {expected:?} in:\n{text}"
        );
        assert!(
            !text.contains("sdk.py:"),
            "{name}: the SDK itself has errors:\n{text}"
        );
    }
}

/// CPython parses and runs the declarations (they are stubs, but valid source).
#[test]
fn sdk_is_valid_python() {
    let py = sdk_check::python_with_mypy();
    let sdk = python::render(&sdk_check::definitions());
    let dir = sdk_check::case_dir("py", "import");
    std::fs::write(dir.join("sdk.py"), &sdk.code).expect("write sdk.py");
    let out = Command::new(&py)
        .current_dir(&dir)
        .args([
            "-c",
            "import sdk, typing; assert typing.get_type_hints(sdk.Tools.grep)['args'] is sdk.GrepArgs; print(sorted(sdk.GrepArgs.__required_keys__))",
        ])
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "python could not import the SDK:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.trim(), "['pattern']");
}

#[test]
fn sdk_structure() {
    let defs = sdk_check::definitions();
    let a = python::render(&defs);
    let mut reversed = defs.clone();
    reversed.reverse();
    assert_eq!(
        a.code,
        python::render(&reversed).code,
        "input order changed the SDK"
    );
    assert!(
        a.code
            .starts_with("from typing import Any, Literal, NotRequired, Protocol, TypedDict\n")
    );
    // The odd tool: a comment, its keys degrade the object, the float enum is reported.
    assert!(a.code.contains(
        "    # tools[\"odd-name\"](args: dict[str, Any]) -> str | list[int | None]\n    #   A tool */ with an awkward name and \"quotes\".\n"
    ));
    assert!(
        a.warnings.iter().any(|w| w.tool == "odd-name"
            && w.path == "parameters"
            && w.lost.contains("dict[str, Any]")),
        "{:?}",
        a.warnings
    );
    // Children before parents; descriptions as comments; open objects say so.
    let hit = a
        .code
        .find("class SearchRecordsOutputHits(TypedDict):")
        .expect("hit class");
    let parent = a
        .code
        .find("class SearchRecordsOutput(TypedDict):")
        .expect("output class");
    assert!(hit < parent);
    assert!(
        a.code
            .contains("    # Tags of the record.\n    tags: list[str]\n")
    );
    assert!(a.code.contains("    weights: dict[str, float]\n"));
    assert!(
        a.code
            .contains("    mode: NotRequired[Literal[\"fast\"] | Literal[\"slow\"]]\n")
    );
}
