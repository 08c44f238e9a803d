//! `dsh-tools code`: a program runs end to end against the reference tools.

use std::io::Write as _;
use std::process::{Command, Stdio};

fn root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("README.md"),
        "# demo\na tool\nanother tool\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("notes.txt"), "no match here\ntool time\n").unwrap();
    dir
}

fn bin(root: &std::path::Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dsh-tools"));
    cmd.arg("--root").arg(root);
    cmd
}

#[test]
fn a_program_reads_and_greps_concurrently() {
    let dir = root();
    let out = bin(dir.path())
        .args([
            "code",
            r#"const [a, b] = await Promise.all([tools.read({file_path: "README.md"}), tools.grep({pattern: "tool"})]); return {lines: a.lines.length, matches: b.matches.length}"#,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "{\n  \"lines\": 3,\n  \"matches\": 3\n}\n"
    );
}

#[test]
fn the_program_can_come_from_stdin_and_sub_calls_pass_the_root_guard() {
    let dir = root();
    let mut child = bin(dir.path())
        .args(["code", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"console.log('reading');\ntry {\n  await tools.read({file_path: '/etc/hostname'});\n} catch (e) {\n  return (e as ToolCallError).toolName;\n}")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "reading\nread\n");
}

#[test]
fn a_failed_run_exits_1_with_the_code() {
    let dir = root();
    let out = bin(dir.path())
        .args(["code", "console.log('before');\nthrow new Error('nope');"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error[CODE_RUN_FAILED]: code run failed (exception): Error: nope (at line 2, column 11)\nCaptured output:\nbefore\n"
    );
}
