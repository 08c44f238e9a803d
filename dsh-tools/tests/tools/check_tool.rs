//! `dsh_testing::ToolCheck` on every reference tool, each case in a fresh
//! sandbox directory (the file tools confined to it, `bash` running in it).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use dsh_runtime::DynTool;
use dsh_runtime::json::Value;
use dsh_testing::{ToolCheck, toolbox_tool};
use dsh_tools::bash::{BashConfig, Shell};
use dsh_tools::fs::Files;
use dsh_tools::scope::FsScope;
use dsh_tools::search::Search;
use proptest::prelude::*;

/// A sandbox with a few files for the file tools to find.
fn seed(dir: &Path) {
    let _ = std::fs::write(dir.join("a.txt"), "alpha\nbeta\ngamma\n");
    let _ = std::fs::create_dir(dir.join("sub"));
    let _ = std::fs::write(dir.join("sub").join("b.rs"), "fn main() {}\n");
}

/// The tool `name` of the toolbox `make` builds over a confined scope of each sandbox.
fn file_tool<B: dsh_runtime::Toolbox>(
    name: &'static str,
    make: fn(FsScope) -> B,
) -> ToolCheck<Value> {
    ToolCheck::erased(true, move |dir| {
        seed(dir);
        let scope =
            FsScope::confined(dir).unwrap_or_else(|e| panic!("sandbox {}: {e}", dir.display()));
        toolbox_tool(Arc::new(make(scope)), name)
            .unwrap_or_else(|| panic!("the toolbox has no tool {name:?}"))
    })
}

/// Paths the file tools are called with: mostly ones that exist in the sandbox.
fn paths() -> BoxedStrategy<Value> {
    prop_oneof![
        3 => proptest::sample::select(vec!["a.txt", "sub/b.rs", "sub", ".", "new.txt", "sub/new.md"]).prop_map(Value::from),
        1 => "\\PC{0,12}".prop_map(Value::from),
    ]
    .boxed()
}

#[test]
fn check_tool_read() {
    file_tool("read", Files::new)
        .cases(24)
        .argument("file_path", paths())
        .run();
}

#[test]
fn check_tool_write() {
    file_tool("write", Files::new)
        .cases(24)
        .argument("file_path", paths())
        .run();
}

#[test]
fn check_tool_edit() {
    file_tool("edit", Files::new)
        .cases(24)
        .argument("file_path", paths())
        // `old_string` equal to `new_string` is the body's INVALID_ARGS, on purpose.
        .body_rejects(|args| args.get("old_string") == args.get("new_string"))
        .run();
}

#[test]
fn check_tool_grep() {
    file_tool("grep", Search::new)
        .cases(24)
        .argument("path", paths())
        .run();
}

#[test]
fn check_tool_glob() {
    file_tool("glob", Search::new)
        .cases(24)
        .argument("path", paths())
        .run();
}

/// `bash` over a fresh job runtime in each sandbox, with commands from a safe set (the
/// generated `command` would otherwise be an arbitrary shell line).
#[test]
fn check_tool_bash() {
    let commands = vec![
        "true",
        "false",
        "echo hello",
        "printf 'a\\nb'",
        "echo oops >&2; exit 3",
        "ls",
        "pwd",
        "cat a.txt",
    ];
    ToolCheck::erased(true, |dir| {
        seed(dir);
        let config = BashConfig::default()
            .with_cwd(dir)
            .with_spill_dir(dir)
            .with_kill_grace(Duration::from_millis(100));
        toolbox_tool(Arc::new(Shell::new(config)), "bash")
            .unwrap_or_else(|| panic!("the shell has no tool \"bash\""))
    })
    .cases(12)
    .argument(
        "command",
        proptest::sample::select(commands)
            .prop_map(Value::from)
            .boxed(),
    )
    .argument(
        "workdir",
        proptest::sample::select(vec![".", "sub", "missing"])
            .prop_map(Value::from)
            .boxed(),
    )
    .cancel_grace(Duration::from_secs(2))
    .run();
}

fn job_tool(name: &'static str) -> ToolCheck<Value> {
    ToolCheck::erased(false, move |_| -> DynTool {
        toolbox_tool(Arc::new(dsh_tools::jobs::Jobs::new()), name)
            .unwrap_or_else(|| panic!("the job tools have no {name:?}"))
    })
    .cases(16)
}

#[test]
fn check_tool_job_output() {
    job_tool("job_output").run();
}

#[test]
fn check_tool_job_list() {
    job_tool("job_list").run();
}

#[test]
fn check_tool_job_kill() {
    job_tool("job_kill").run();
}
