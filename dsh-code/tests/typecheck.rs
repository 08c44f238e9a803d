//! The programs the tests run type-check, with `tsc --strict --noEmit`, against the SDK
//! declaration of the probe tools; and the SDK text `sdk_text` generates is valid
//! TypeScript.
//!
//! `typescript` is installed with npm into `target/dsh-code-tsc` on the first run.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use dsh_runtime::Registry;
use support::*;

/// The SDK a model would be shown for the probe tools, with exact types (what the typed
/// generator produces for them).
const PROBE_SDK: &str = r#"type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }

interface ToolArgsMap {
  /** Return the value it was given. */
  echo: { value: JsonValue; };
  /** Like `slow`, but it must run alone. */
  exclusive: { label: string; ms: number; };
  /** Always fails. */
  fail: { message: string; };
  /** Attach a context and end the turn. */
  remark: { text: string; };
  /** Wait `ms` milliseconds, then return `label`; stops early when cancelled. */
  slow: { label: string; ms: number; };
}

interface ToolOutputMap {
  echo: JsonValue;
  exclusive: string;
  fail: JsonValue;
  remark: boolean;
  slow: string;
}

type ToolName = keyof ToolOutputMap

declare class ToolCallError extends Error {
  readonly name: "ToolCallError";
  readonly toolName: ToolName;
}

declare const tools: {
  [K in ToolName]: (args: ToolArgsMap[K]) => Promise<ToolOutputMap[K]>;
}
"#;

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

#[test]
fn the_test_programs_type_check_against_the_sdk() {
    let mut files = vec![
        ("sdk.d.ts".to_string(), PROBE_SDK.to_string()),
        ("console.d.ts".to_string(), CONSOLE.to_string()),
    ];
    for (name, body) in programs::ALL {
        files.push((format!("{name}.ts"), program_file(body)));
    }
    if let Err(e) = check(&files) {
        panic!("tsc rejected the test programs:\n{e}");
    }
}

#[test]
fn the_checker_rejects_a_program_misusing_the_sdk() {
    // Guards the check above against passing vacuously.
    let files = vec![
        ("sdk.d.ts".to_string(), PROBE_SDK.to_string()),
        ("console.d.ts".to_string(), CONSOLE.to_string()),
        (
            "bad.ts".to_string(),
            program_file("const s: number = await tools.slow({label: 1, ms: 5});\nreturn s;"),
        ),
    ];
    let err = check(&files).unwrap_err();
    assert!(err.contains("bad.ts"), "{err}");
}

#[test]
fn the_generated_sdk_text_is_valid_typescript() {
    let env = default_env();
    let registry: &Registry = &env.registry;
    let tools: Vec<_> = registry
        .names()
        .iter()
        .filter_map(|n| registry.get(n))
        .collect();
    let text = dsh_code::sdk_text(&tools);
    let block = text
        .split_once("```ts\n")
        .and_then(|(_, rest)| rest.split_once("\n```"))
        .map(|(ts, _)| ts.to_string())
        .expect("a ts block");
    let files = vec![
        ("sdk.d.ts".to_string(), block),
        ("console.d.ts".to_string(), CONSOLE.to_string()),
        (
            "use.ts".to_string(),
            program_file(
                "const v = await tools.echo({value: 1});\nconsole.log(v);\ntry { await tools.fail({message: 'x'}); } catch (e) { if (e instanceof ToolCallError) return e.toolName; }\nreturn v;",
            ),
        ),
    ];
    if let Err(e) = check(&files) {
        panic!("tsc rejected the generated SDK:\n{e}\n{text}");
    }
}
