//! Shared helpers for the reference tool tests.
#![allow(dead_code)]

use std::path::Path;

use dsh_runtime::cards::{CallView, ResultView};
use dsh_runtime::json::{self, Value};
use dsh_runtime::{RegistrationHandle, Registry, ToolCall, ToolResult};

/// A registry with the file and search tools (no guard).
pub(crate) struct Tools {
    pub registry: Registry,
    _regs: Vec<RegistrationHandle>,
}

impl Tools {
    /// Unconfined: relative paths resolve against the working directory.
    pub(crate) fn new() -> Tools {
        let registry = Registry::new();
        let mut regs = dsh_tools::fs::register(&registry).expect("fs tools register");
        regs.extend(dsh_tools::search::register(&registry).expect("search tools register"));
        Tools {
            registry,
            _regs: regs,
        }
    }

    /// Confined to `root`: relative paths resolve against it.
    pub(crate) fn confined(root: &Path) -> Tools {
        let scope = dsh_tools::scope::FsScope::confined(root).expect("root");
        let registry = Registry::new();
        let mut regs =
            dsh_tools::fs::register_in(&registry, scope.clone()).expect("fs tools register");
        regs.extend(
            dsh_tools::search::register_in(&registry, scope).expect("search tools register"),
        );
        Tools {
            registry,
            _regs: regs,
        }
    }

    /// One call through the full pipeline; `args` is JSON text.
    pub(crate) async fn call(&self, name: &str, args: &str) -> ToolResult {
        self.registry.execute(ToolCall::new("t1", name, args)).await
    }

    /// The pending card, through the registry.
    pub(crate) fn call_card(&self, name: &str, args: &str) -> CallView {
        self.registry.present_call(name, &v(args))
    }

    /// The completed card of a result, through the registry, from its persisted summary.
    pub(crate) fn result_card(&self, name: &str, args: &str, result: &ToolResult) -> ResultView {
        self.registry
            .present_result(name, &v(args), &result.summary())
    }
}

pub(crate) fn v(text: &str) -> Value {
    json::parse(text).expect("test JSON")
}

/// A JSON string literal for a path (for building argument text).
pub(crate) fn q(path: &Path) -> String {
    serde_json::to_string(path.to_str().expect("UTF-8 temp path")).expect("string")
}

/// The failure's code and message, or a panic naming the unexpected success.
pub(crate) fn failure(result: &ToolResult) -> (Option<&str>, &str) {
    match result.message() {
        Some(message) => (result.code_str(), message),
        None => panic!("expected a failure, got {result:?}"),
    }
}

/// The success value, or a panic naming the failure.
pub(crate) fn value(result: &ToolResult) -> &Value {
    match result.value() {
        Some(v) => v,
        None => panic!("expected a success, got {result:?}"),
    }
}

pub(crate) fn write(path: &Path, text: impl AsRef<[u8]>) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(path, text).expect("write fixture");
}
