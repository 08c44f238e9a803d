//! The TypeScript code-mode SDK, checked by its real consumer: `tsc --strict --noEmit`
//! compiles the generated declarations with a program using `tools.<name>(args)`
//! correctly, and rejects programs that misuse them with the expected errors.
//!
//! TypeScript is installed on first run into `target/sdk-check/node_modules`.

use crate::sdk_check;

use std::path::Path;
use std::process::Command;

use dsh_code::sdk::typescript;

fn tsconfig(dir: &Path) {
    std::fs::write(
        dir.join("tsconfig.json"),
        r#"{"compilerOptions":{"strict":true,"noEmit":true,"target":"es2022","lib":["es2022"],"types":[],"skipLibCheck":true},"files":["sdk.ts","program.ts"]}"#,
    )
    .expect("write tsconfig");
}

/// Compile the SDK with `program`; the compiler's exit success and its output.
fn compile(name: &str, program: &str) -> (bool, String) {
    let tsc = sdk_check::tsc();
    let sdk = typescript::render(&sdk_check::definitions());
    let dir = sdk_check::case_dir("ts", name);
    std::fs::write(dir.join("sdk.ts"), &sdk.code).expect("write sdk.ts");
    std::fs::write(dir.join("program.ts"), program).expect("write program.ts");
    tsconfig(&dir);
    let out = Command::new("node")
        .arg(&tsc)
        .arg("-p")
        .arg(&dir)
        .output()
        .expect("run node (needed for tsc)");
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
async function main(): Promise<number> {
  const g = await tools.grep({ pattern: "fn\\s+main", include: "*.rs" });
  let n = 0;
  for (const m of g.matches) {
    const p: string = m.path;
    n += m.lineNumber;
    const line: string = m.line;
    void line;
    void p;
  }
  const b = await tools.bash({ command: "ls", description: "list files" });
  if (b.kind === "foreground") {
    const out: string = b.stdout.text;
    const code: number | undefined = b.exitCode;
    void out; void code;
  } else {
    const id: string = b.jobId;
    void id;
  }
  const jobs = await tools.job_list({});
  for (const j of jobs) {
    const s: "running" | "stopping" | "completed" | "killed" | "failed" = j.status;
    void s;
  }
  const r = await tools.search_records({
    query: "q",
    mode: "slow",
    filters: [{ field: "a", values: ["b"], limit: 3 }],
    weights: { a: 1.5 },
  });
  const total: number = r.total;
  const hit = r.hits[0];
  const tags: string[] = hit ? hit.tags : [];
  const odd = await tools["odd-name"]({ "x y": 1, class: "k", ratio: 1.5 });
  const oddText: string | (number | null)[] = odd;
  try {
    await tools.read({ file_path: "README.md", offset: 2, limit: 5 });
  } catch (e) {
    if (e instanceof ToolCallError) {
      const who: ToolName = e.toolName;
      const why: string = e.message;
      void who; void why;
    }
  }
  void tags; void oddText;
  return n + total;
}
void main;
"#;
    let (ok, text) = compile("correct", program);
    assert!(ok, "tsc rejected the correct program:\n{text}");
}

/// Each misuse fails with the expected diagnostic, at the line that misuses.
#[test]
fn misuse_fails_with_the_expected_errors() {
    let cases = [
        (
            "wrong_type",
            "async function f() { await tools.grep({ pattern: 42 }); }\n",
            "error TS2322: Type 'number' is not assignable to type 'string'",
        ),
        (
            "missing_key",
            "async function f() { await tools.bash({ command: \"ls\" }); }\n",
            "Property 'description' is missing",
        ),
        (
            "missing_field",
            "async function f() { const g = await tools.grep({ pattern: \"a\" }); return g.nonexistent; }\n",
            "error TS2339: Property 'nonexistent' does not exist",
        ),
        (
            "unknown_tool",
            "async function f() { await tools.nope({}); }\n",
            "error TS2339: Property 'nope' does not exist",
        ),
        (
            "wrong_enum",
            "async function f() { await tools.search_records({ query: \"q\", mode: \"medium\", filters: [], weights: {} }); }\n",
            "error TS2322: Type '\"medium\"' is not assignable to type '\"fast\" | \"slow\" | undefined'",
        ),
        (
            "wrong_output_use",
            "async function f() { const r = await tools.read({ file_path: \"x\" }); const n: number = r; return n; }\n",
            "error TS2322",
        ),
    ];
    for (name, program, expected) in cases {
        let (ok, text) = compile(name, &format!("{program}void f;\n"));
        assert!(!ok, "{name}: tsc accepted a misuse:\n{program}");
        assert!(
            text.contains("program.ts(1,"),
            "{name}: the error is not on the misusing line:\n{text}"
        );
        assert!(
            text.contains(expected),
            "{name}: expected {expected:?} in:\n{text}"
        );
        assert!(
            !text.contains("sdk.ts("),
            "{name}: the SDK itself has errors:\n{text}"
        );
    }
}

#[test]
fn sdk_is_deterministic_and_sorted() {
    let mut defs = sdk_check::definitions();
    let a = typescript::render(&defs);
    defs.reverse();
    let b = typescript::render(&defs);
    assert_eq!(a.code, b.code, "order of the input changed the SDK");
    let args = a.code.split("interface ToolOutputMap").next().unwrap_or("");
    let members: Vec<&str> = args
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   ") && !l.starts_with("  /**"))
        .filter(|l| !l.starts_with("  }"))
        .filter_map(|l| l.trim().split(':').next())
        .map(|k| k.trim_matches('"'))
        .collect();
    let mut sorted = members.clone();
    sorted.sort();
    assert_eq!(members, sorted);
    assert!(members.contains(&"odd-name"), "{members:?}");
    assert!(
        a.code.contains("\n  \"odd-name\": {\n"),
        "a name that is not an identifier is quoted"
    );
    // The description's comment closer is escaped.
    assert!(
        a.code
            .contains("/** A tool *\\/ with an awkward name and \"quotes\". */")
    );
}
