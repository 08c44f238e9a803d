//! The harness of the macros' ui tests: cases that must compile (and run), and cases that
//! must fail to compile with a reviewed `.stderr`.
//!
//! Each case is compiled by a direct `rustc` call against the artifacts Cargo built for the
//! test binary itself (their paths come from `ui_tests_flags::rustc_flags!()`, expanded in
//! the test). `trybuild` instead generates a Cargo project with its own target directory,
//! its own rustflags (`--cfg trybuild`, `-A dead_code`, `--verbose`) and the feature set of
//! this package alone, so every dependency (serde, tokio, syn, darling, regex...) was built
//! a second time on every fresh checkout: over two minutes of a `cargo test --workspace`
//! run. Here nothing is rebuilt: a case costs one rustc invocation.
//!
//! The output format follows trybuild's, so the snapshots read the same: rustc's human
//! output without colours at width 140, with paths outside the case rewritten as
//! `$WORKSPACE/...` (this workspace), `$CARGO/...` (registry sources) and `$RUST/...` (the
//! standard library), line numbers removed from snippets of those files, and the closing
//! summary lines dropped.
//!
//! `UI_FILTER=text` runs only the cases whose path contains `text`.
//! `TRYBUILD=overwrite` writes the actual output of every failing compile-fail case to its
//! `.stderr` (the variable keeps the name most Rust projects use for this).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What a case must do.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// Compile, and exit successfully when run.
    Pass,
    /// Fail to compile with the output in the `.stderr` next to it.
    CompileFail,
}

struct Case {
    /// Relative to the package root, as rustc prints it.
    path: PathBuf,
    expect: Expect,
}

/// A set of ui cases, compiled and checked by [`TestCases::run`].
pub struct TestCases {
    driver: String,
    flags: Vec<String>,
    root: PathBuf,
    workspace: PathBuf,
    out_dir: PathBuf,
    cases: Vec<Case>,
}

enum Outcome {
    Ok,
    Overwritten,
    Failed(String),
}

impl TestCases {
    /// Cases compiled with `driver` and `flags` (from `rustc_flags!()`), their binaries
    /// written under `out_dir`.
    pub fn new((driver, flags): (&str, &[&str]), out_dir: &Path) -> TestCases {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let workspace = root
            .parent()
            .map_or_else(|| root.clone(), Path::to_path_buf);
        TestCases {
            driver: driver.to_string(),
            flags: flags.iter().map(|f| f.to_string()).collect(),
            root,
            workspace,
            out_dir: out_dir.join("ui"),
            cases: Vec::new(),
        }
    }

    /// Every `.rs` file in `dir` (relative to the package root) must compile and run.
    pub fn pass(&mut self, dir: &str) {
        self.add(dir, Expect::Pass);
    }

    /// Every `.rs` file in `dir` must fail to compile with its `.stderr`.
    pub fn compile_fail(&mut self, dir: &str) {
        self.add(dir, Expect::CompileFail);
    }

    fn add(&mut self, dir: &str, expect: Expect) {
        let entries = std::fs::read_dir(self.root.join(dir))
            .unwrap_or_else(|e| panic!("cannot read the ui case directory `{dir}`: {e}"));
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok())
            .map(|e| Path::new(dir).join(e.file_name()))
            .collect();
        paths.sort();
        for path in paths {
            let ext = path.extension().and_then(|e| e.to_str());
            if ext == Some("rs") {
                if let Ok(filter) = std::env::var("UI_FILTER")
                    && !path.to_string_lossy().contains(&filter)
                {
                    continue;
                }
                self.cases.push(Case { path, expect });
            } else if ext == Some("stderr")
                && (expect == Expect::Pass || !self.root.join(path.with_extension("rs")).exists())
            {
                panic!(
                    "`{}` is a snapshot without a case: delete it or add its `.rs`",
                    path.display()
                );
            }
        }
    }

    /// Compile every case (on all cores) and panic with a report if any does not do what
    /// it must.
    pub fn run(self) {
        std::fs::create_dir_all(&self.out_dir)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", self.out_dir.display()));
        let overwrite = std::env::var_os("TRYBUILD").is_some_and(|v| v == "overwrite");
        let next = AtomicUsize::new(0);
        let outcomes: Mutex<Vec<Option<Outcome>>> =
            Mutex::new(self.cases.iter().map(|_| None).collect());
        let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(case) = self.cases.get(i) else { break };
                        let outcome = self.check(case, overwrite);
                        if let Ok(mut all) = outcomes.lock() {
                            all[i] = Some(outcome);
                        }
                    }
                });
            }
        });
        let outcomes = outcomes.into_inner().unwrap_or_default();
        let mut failures = 0;
        let mut report = String::new();
        for (case, outcome) in self.cases.iter().zip(outcomes) {
            let what = match case.expect {
                Expect::Pass => "",
                Expect::CompileFail => " [should fail to compile]",
            };
            let status = match outcome {
                Some(Outcome::Ok) => "ok".to_string(),
                Some(Outcome::Overwritten) => "wrote the actual output to its .stderr".to_string(),
                Some(Outcome::Failed(why)) => {
                    failures += 1;
                    format!("FAILED\n{why}")
                }
                None => {
                    failures += 1;
                    "FAILED (not run)".to_string()
                }
            };
            let _ = writeln!(report, "test {}{what} ... {status}", case.path.display());
        }
        println!("{report}");
        assert!(
            failures == 0,
            "{failures} of {} ui cases failed; if the actual output is right, rerun with \
             TRYBUILD=overwrite and review the diff",
            self.cases.len()
        );
    }

    fn check(&self, case: &Case, overwrite: bool) -> Outcome {
        let name = case
            .path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("case")
            .replace('-', "_");
        let family = case
            .path
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|s| s.to_str())
            .unwrap_or("ui");
        let bin = self.out_dir.join(format!("{family}-{name}"));
        // Run from the workspace root, where Cargo ran rustc for the dependencies: their
        // sources are recorded relative to it, and rustc reads them from there to show
        // snippets. The case's own path is remapped back to `tests/ui/...`.
        let package = self
            .root
            .strip_prefix(&self.workspace)
            .unwrap_or(Path::new(""));
        let output = Command::new(&self.driver)
            .current_dir(&self.workspace)
            .arg(package.join(&case.path))
            .arg(format!("--remap-path-prefix={}/=", package.display()))
            .arg(format!("--crate-name={name}"))
            .args([
                "--crate-type=bin",
                "--error-format=human",
                "--color=never",
                "--diagnostic-width=140",
                // Full type names in messages instead of a note pointing to a file.
                "--verbose",
                "-Adead_code",
                "-o",
            ])
            .arg(&bin)
            .args(&self.flags)
            .output();
        let output = match output {
            Ok(o) => o,
            Err(e) => return Outcome::Failed(format!("cannot run `{}`: {e}", self.driver)),
        };
        let stderr = String::from_utf8_lossy(&output.stderr);
        match case.expect {
            Expect::Pass => {
                if !output.status.success() {
                    return Outcome::Failed(format!("expected to compile:\n{stderr}"));
                }
                match Command::new(&bin).output() {
                    Ok(run) if run.status.success() => Outcome::Ok,
                    Ok(run) => Outcome::Failed(format!(
                        "compiled, but running it failed ({}):\n{}{}",
                        run.status,
                        String::from_utf8_lossy(&run.stdout),
                        String::from_utf8_lossy(&run.stderr)
                    )),
                    Err(e) => Outcome::Failed(format!("cannot run {}: {e}", bin.display())),
                }
            }
            Expect::CompileFail => {
                if output.status.success() {
                    return Outcome::Failed("expected a compile error, but it compiled".into());
                }
                let actual = normalize(&stderr, &self.workspace);
                let snapshot = self.root.join(case.path.with_extension("stderr"));
                let expected = std::fs::read_to_string(&snapshot)
                    .ok()
                    .map(|s| s.replace("\r\n", "\n"));
                if expected.as_deref() == Some(actual.as_str()) {
                    return Outcome::Ok;
                }
                if overwrite {
                    return match std::fs::write(&snapshot, &actual) {
                        Ok(()) => Outcome::Overwritten,
                        Err(e) => Outcome::Failed(format!("cannot write the snapshot: {e}")),
                    };
                }
                Outcome::Failed(match expected {
                    Some(expected) => format!(
                        "EXPECTED:\n{}\nACTUAL:\n{}",
                        indent(&expected),
                        indent(&actual)
                    ),
                    None => format!("no .stderr snapshot; ACTUAL:\n{}", indent(&actual)),
                })
            }
        }
    }
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("    | {l}\n")).collect()
}

/// Make rustc's output independent of the machine: see the crate docs.
pub fn normalize(stderr: &str, workspace: &Path) -> String {
    let workspace = format!("{}/", workspace.display());
    // Each line, with the digits of its line number when it is a numbered line of the case.
    let mut lines: Vec<(String, usize)> = Vec::new();
    // Inside a snippet of a file outside the case, whose line numbers would change with
    // every edit of that file.
    let mut foreign = false;
    for line in stderr.lines() {
        if is_summary(line) {
            continue;
        }
        let mut line = line.replace(&workspace, "$WORKSPACE/");
        line = replace_dir(&line, "/registry/src/", 1, "$CARGO/");
        line = replace_dir(&line, "/lib/rustlib/src/rust/library/", 0, "$RUST/");
        line = replace_dir(&line, "/rustc/", 2, "$RUST/");
        let trimmed = line.trim_start();
        let mut local_digits = 0;
        if let Some(location) = trimmed
            .strip_prefix("--> ")
            .or_else(|| trimmed.strip_prefix("::: "))
        {
            // Local: the case (`tests/...`). Foreign: absolute, already rewritten, or
            // relative to the workspace root (the workspace's other crates).
            foreign = !location.starts_with("tests/");
            if foreign {
                let location = if location.starts_with(['$', '/']) {
                    location.to_string()
                } else {
                    format!("$WORKSPACE/{location}")
                };
                let path = strip_line_col(&location);
                let prefix_len = line.len() - trimmed.len() + 4;
                line = format!("{}{path}", &line[..prefix_len]);
            }
        } else if foreign {
            line = blank_line_number(&line);
        } else {
            local_digits = line_number_digits(&line);
        }
        line = others_count(&line);
        lines.push((line.trim_end().to_string(), local_digits));
    }
    let mut lines = shorten_impl_lists(lines);
    narrow_gutters(&mut lines);
    let mut out: Vec<String> = lines.into_iter().map(|(l, _)| l).collect();
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    let mut text = out.join("\n");
    text.push('\n');
    text
}

/// rustc sizes the gutter of a diagnostic for its longest line number, which may be a
/// foreign one that was just blanked: size each diagnostic's gutter for the case's own
/// line numbers instead.
fn narrow_gutters(lines: &mut [(String, usize)]) {
    // rustc separates diagnostics with a blank line; the notes of one follow it directly.
    let mut start = 0;
    while start < lines.len() {
        let end = (start + 1..lines.len())
            .find(|&i| lines[i].0.is_empty())
            .unwrap_or(lines.len());
        let block = &mut lines[start..end];
        let width = block.iter().find_map(|(l, _)| {
            let t = l.trim_start();
            (t.starts_with("--> ") || t.starts_with("::: ")).then(|| l.len() - t.len())
        });
        let local = block.iter().map(|(_, d)| *d).max().unwrap_or(0).max(1);
        if let Some(width) = width
            && width > local
        {
            let cut = width - local;
            for (l, _) in block.iter_mut() {
                let lead = l.len() - l.trim_start().len();
                if lead > 0 {
                    l.drain(..lead.min(cut));
                }
            }
        }
        start = end + 1;
    }
}

/// With `--verbose`, rustc lists every type implementing a trait; keep the first eight,
/// as it does without the flag, so an impl added anywhere does not change the snapshot.
fn shorten_impl_lists(lines: Vec<(String, usize)>) -> Vec<(String, usize)> {
    const SHOWN: usize = 8;
    let mut out = Vec::with_capacity(lines.len());
    let mut it = lines.into_iter().peekable();
    while let Some(line) = it.next() {
        let header = line.0.contains("the following other types implement trait")
            || line.0.contains("the following types implement trait");
        let header_indent = line.0.len() - line.0.trim_start().len();
        out.push(line);
        if !header {
            continue;
        }
        let mut items = 0;
        let mut item_indent = 0;
        while let Some(next) = it.peek() {
            let indent = next.0.len() - next.0.trim_start().len();
            if next.0.trim().is_empty() || indent <= header_indent + 2 {
                break;
            }
            item_indent = indent;
            items += 1;
            if let Some(item) = it.next()
                && items <= SHOWN
            {
                out.push(item);
            }
        }
        if items > SHOWN {
            let indent = " ".repeat(item_indent.saturating_sub(2));
            out.push((format!("{indent}and $N others"), 0));
        }
    }
    out
}

/// The digits of `12 | code`'s line number; 0 for other lines.
fn line_number_digits(line: &str) -> usize {
    let t = line.trim_start();
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && t[digits..].starts_with(" |") {
        digits
    } else {
        0
    }
}

/// The closing lines of a failed compilation, which only count errors.
fn is_summary(line: &str) -> bool {
    line.starts_with("error: aborting due to")
        || line.starts_with("Some errors have detailed explanations")
        || line.starts_with("For more information about")
        || (line.starts_with("warning: ") && line.ends_with("emitted"))
}

/// Replace an absolute path prefix ending in `marker` plus `extra` more directories (the
/// registry's index directory, `library/` of a `/rustc/<hash>/` path) by `with`.
fn replace_dir(line: &str, marker: &str, extra: usize, with: &str) -> String {
    let Some(at) = line.find(marker) else {
        return line.to_string();
    };
    let start = line[..at].rfind([' ', '`', '(']).map_or(0, |i| i + 1);
    let mut end = at + marker.len();
    for _ in 0..extra {
        match line[end..].find('/') {
            Some(i) => end += i + 1,
            None => return line.to_string(),
        }
    }
    format!("{}{with}{}", &line[..start], &line[end..])
}

/// `path:12:5` -> `path`.
fn strip_line_col(location: &str) -> &str {
    let mut path = location;
    for _ in 0..2 {
        if let Some((head, tail)) = path.rsplit_once(':')
            && !tail.is_empty()
            && tail.bytes().all(|b| b.is_ascii_digit())
        {
            path = head;
        }
    }
    path
}

/// `12 | code` -> `   | code`.
fn blank_line_number(line: &str) -> String {
    let digits = line
        .trim_start()
        .bytes()
        .take_while(u8::is_ascii_digit)
        .count();
    let lead = line.len() - line.trim_start().len();
    if digits > 0 && line[lead + digits..].starts_with(" |") {
        format!("{}{}", " ".repeat(lead + digits), &line[lead + digits..])
    } else {
        line.to_string()
    }
}

/// `and 12 others` -> `and $N others`: the count moves with every impl added anywhere.
fn others_count(line: &str) -> String {
    let trimmed = line.trim_start();
    if let Some(rest) = trimmed.strip_prefix("and ")
        && let Some((n, tail)) = rest.split_once(' ')
        && n.bytes().all(|b| b.is_ascii_digit())
        && tail.starts_with("other")
    {
        let lead = &line[..line.len() - trimmed.len()];
        return format!("{lead}and $N {tail}");
    }
    line.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_foreign_paths_and_summaries() {
        let raw = "\
error[E0277]: the trait bound `A: B` is not satisfied
  --> tests/ui/tool/x.rs:20:17
   |
20 | #[tool(render = show)]
   |                 ^^^^ unsatisfied trait bound
   = help: the following other types implement trait `B`:
           and 12 others
note: required by a bound in `from_value`
  --> /w/dsh-json/src/de.rs:31:27
   |
31 | pub fn from_value() {}
   |        ^^^^^^^^^^
note: required by a bound in `Into`
  --> /rustc/0123abcd/library/core/src/convert/mod.rs:451:1
note: x
  ::: /home/u/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/serde_core-1.0.229/src/de/mod.rs:5:1

error: aborting due to 1 previous error

For more information about this error, try `rustc --explain E0277`.
";
        let expected = "\
error[E0277]: the trait bound `A: B` is not satisfied
  --> tests/ui/tool/x.rs:20:17
   |
20 | #[tool(render = show)]
   |                 ^^^^ unsatisfied trait bound
   = help: the following other types implement trait `B`:
           and $N others
note: required by a bound in `from_value`
  --> $WORKSPACE/dsh-json/src/de.rs
   |
   | pub fn from_value() {}
   |        ^^^^^^^^^^
note: required by a bound in `Into`
  --> $RUST/core/src/convert/mod.rs
note: x
  ::: $CARGO/serde_core-1.0.229/src/de/mod.rs
";
        assert_eq!(normalize(raw, Path::new("/w")), expected);
    }

    #[test]
    fn keeps_eight_impls_and_sizes_gutters_for_the_case() {
        let mut raw = String::from(
            "error[E0277]: `A` has no tool schema\n   --> tests/ui/x.rs:7:9\n    |\n  7 | f(a);\n    |   ^\n    = help: the following other types implement trait `T`:\n",
        );
        for i in 0..10 {
            raw.push_str(&format!("              u{i}\n"));
        }
        raw.push_str("note: required by a bound in `g`\n   --> /w/dsh-runtime/src/lib.rs:120:5\n    |\n120 | fn g() {}\n    |    ^\n");
        let out = normalize(&raw, Path::new("/w"));
        let expected = "\
error[E0277]: `A` has no tool schema
 --> tests/ui/x.rs:7:9
  |
7 | f(a);
  |   ^
  = help: the following other types implement trait `T`:
            u0
            u1
            u2
            u3
            u4
            u5
            u6
            u7
          and $N others
note: required by a bound in `g`
 --> $WORKSPACE/dsh-runtime/src/lib.rs
  |
  | fn g() {}
  |    ^
";
        assert_eq!(out, expected);
    }
}
