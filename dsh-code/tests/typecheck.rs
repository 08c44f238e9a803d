//! The programs the tests run type-check, with `tsc --strict --noEmit`, against the SDK
//! `sdk_text` generates for the probe tools (the declarations a model in code mode is
//! shown), and programs misusing a tool fail the same check.
//!
//! `typescript` is installed with npm into `target/dsh-code-tsc` on the first run.

mod support;

// The SDK renderers' property tests (in this binary, to link one test binary less).
#[path = "sdk/props.rs"]
mod sdk_props;
// Random-schema generators shared with dsh-runtime's property tests.
#[path = "../../dsh-runtime/tests/common/random_schema.rs"]
mod random_schema;

use std::path::{Path, PathBuf};
use std::process::Command;

use dsh_runtime::Registry;
use support::*;

/// What every program also has: `console` (not part of the ES library).
const CONSOLE: &str = "declare const console: {\n  log(...data: unknown[]): void;\n  info(...data: unknown[]): void;\n  warn(...data: unknown[]): void;\n  error(...data: unknown[]): void;\n  debug(...data: unknown[]): void;\n};\n";

fn tsc() -> PathBuf {
    // One install at a time (the tests of this file run in parallel).
    static INSTALL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _once = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/dsh-code-tsc");
    let bin = dir.join("node_modules/typescript/bin/tsc");
    if bin.exists() {
        return bin;
    }
    std::fs::create_dir_all(&dir).expect("create the typescript cache under target/");
    let status = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--silent", "--prefix"])
        .arg(&dir)
        .arg("typescript@5")
        .status();
    match status {
        Ok(s) if s.success() && bin.exists() => bin,
        Ok(s) => panic!(
            "installing npm `typescript` into {} failed ({s}); the type check needs node and npm with access to the npm registry",
            dir.display()
        ),
        Err(e) => panic!(
            "cannot run npm to install `typescript` into {}: {e}; the type check needs node and npm",
            dir.display()
        ),
    }
}

fn check(files: &[(String, String)]) -> Result<(), String> {
    let dir = tempdir();
    let mut paths = Vec::new();
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        paths.push(path);
    }
    let out = Command::new("node")
        .arg(tsc())
        .args([
            "--strict", "--noEmit", "--target", "es2022", "--lib", "es2022",
        ])
        .args(&paths)
        .output()
        .expect("run node");
    let _ = std::fs::remove_dir_all(&dir);
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

fn tempdir() -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("dsh-code-tsc-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn program_file(body: &str) -> String {
    format!(
        "export {{}};\nasync function program(): Promise<JsonValue | void> {{\n{body}\n}}\nvoid program;\n"
    )
}

/// The `ts` block of the prompt section a model in the probe scope is shown.
fn probe_sdk() -> String {
    let env = default_env();
    let shown = dsh_code::prompt(&env.registry, Some(env.scope.id()));
    assert!(
        shown.warnings.is_empty(),
        "the probe tools are fully typed: {:?}",
        shown.warnings
    );
    let text = shown.instructions.expect("the probe scope shows the SDK");
    let block = text
        .split_once("```ts\n")
        .and_then(|(_, rest)| rest.split_once("\n```"))
        .map(|(ts, _)| ts.to_string())
        .expect("a ts block");
    // The generator is the one prompt assembly uses.
    let registry: &Registry = &env.registry;
    let tools: Vec<_> = registry.view().tools();
    assert_eq!(dsh_code::sdk::sdk_text(&tools).code, block);
    block
}

fn with_sdk(programs: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut files = vec![
        ("sdk.d.ts".to_string(), probe_sdk()),
        ("console.d.ts".to_string(), CONSOLE.to_string()),
    ];
    for (name, body) in programs {
        files.push((format!("{name}.ts"), program_file(body)));
    }
    files
}

#[test]
fn the_test_programs_type_check_against_the_sdk() {
    if let Err(e) = check(&with_sdk(programs::ALL)) {
        panic!(
            "tsc rejected the test programs:\n{e}\nSDK:\n{}",
            probe_sdk()
        );
    }
}

#[test]
fn programs_misusing_the_sdk_fail_the_check() {
    // Each is wrong in one way the typed SDK states; a loose SDK would accept them all.
    let bad = [
        (
            "wrong_argument_type",
            "await tools.slow({label: 1, ms: 5});",
        ),
        ("missing_argument", "await tools.slow({label: 'a'});"),
        ("unknown_tool", "await tools.nope({});"),
        (
            "run_code_is_not_a_tool",
            "await tools.run_code({code: '', description: 'x'});",
        ),
        (
            "output_type",
            "const s: number = await tools.slow({label: 'a', ms: 5});\nreturn s;",
        ),
        (
            "output_type_of_remark",
            "const s: string = await tools.remark({text: 'a'});\nreturn s;",
        ),
        (
            "tool_name_type",
            "try { await tools.fail({message: 'x'}); } catch (e) { if (e instanceof ToolCallError) { const n: 'nope' = e.toolName; return n; } }",
        ),
    ];
    // One tsc run; it reports errors per file, so each file must be named.
    let err = match check(&with_sdk(&bad)) {
        Ok(()) => panic!("tsc accepted every misuse"),
        Err(e) => e,
    };
    for (name, body) in bad {
        assert!(
            err.contains(&format!("{name}.ts(")),
            "tsc accepted {name}: {body}\n{err}"
        );
    }
}

/// With deferred tools, the SDK declares `tools.search` and calls by a found name; a
/// program using them checks, and misuses of the search fail.
#[test]
fn programs_searching_deferred_tools_type_check() {
    let env = default_env();
    let _deferred = register_deferred(&env.registry);
    let shown = dsh_code::prompt(&env.registry, Some(env.scope.id()));
    let text = shown.instructions.expect("the SDK");
    let sdk = text
        .split_once("```ts\n")
        .and_then(|(_, rest)| rest.split_once("\n```"))
        .map(|(ts, _)| ts.to_string())
        .expect("a ts block");
    assert!(sdk.contains("search(query: string"), "{sdk}");
    let files = |programs: &[(&str, &str)]| {
        let mut files = vec![
            ("sdk.d.ts".to_string(), sdk.clone()),
            ("console.d.ts".to_string(), CONSOLE.to_string()),
        ];
        for (name, body) in programs {
            files.push((format!("{name}.ts"), program_file(body)));
        }
        files
    };
    let good = [(
        "search_then_call",
        "const found = await tools.search(\"weather\", { mode: \"bm25\", limit: 3 });\nconst sigs: string[] = found.map((m) => m.signature);\nconst w = await tools.call(found[0].name, { city: \"Oslo\" });\nconst e = await tools.echo({ value: 1 });\nreturn [sigs, w, e];",
    )];
    if let Err(e) = check(&files(&good)) {
        panic!("tsc rejected a search program:\n{e}\nSDK:\n{sdk}");
    }
    let bad = [
        ("query_not_a_string", "await tools.search(1);"),
        (
            "unknown_mode",
            "await tools.search(\"x\", { mode: \"fuzzy\" });",
        ),
        (
            "name_not_a_number",
            "const n: number = (await tools.search(\"x\"))[0].name;\nreturn n;",
        ),
        (
            "loaded_tools_stay_typed",
            "await tools.slow({label: 1, ms: 5});",
        ),
        ("call_needs_a_name", "await tools.call(1, {});"),
        (
            "deferred_tools_are_not_declared",
            "await tools.weather({ city: \"x\" });",
        ),
    ];
    let err = match check(&files(&bad)) {
        Ok(()) => panic!("tsc accepted every misuse of the search"),
        Err(e) => e,
    };
    for (name, body) in bad {
        assert!(
            err.contains(&format!("{name}.ts(")),
            "tsc accepted {name}: {body}\n{err}"
        );
    }
}
