//! # A toolbox: tools that share state
//!
//! What this teaches: `#[toolbox]` on an `impl` block turns each `#[tool]` method into a
//! tool, all of them sharing one value through an `Arc` (here a note store behind a
//! `Mutex`). `Registry::register_toolbox` registers every tool of the value at once (all
//! or none) and returns one registration handle for them all: `unregister()` on it removes
//! every tool of the toolbox (dropping it does nothing). The host keeps its own `Arc` and
//! sees what the tools changed.
//!
//! Run it with `cargo run -p examples --bin toolbox`.
//!
//! Read first: `argument_structs`. Read next: `policy` (deciding which calls may run).

use std::sync::{Arc, Mutex, PoisonError};

use dsh_runtime::{Registry, ToolCall, ToolContext, ToolError, tool, toolbox};

/// A shared list of notes.
pub struct Notes {
    /// Who owns the notes (shown in listings).
    owner: String,
    items: Mutex<Vec<String>>,
}

impl Notes {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<String>> {
        // A tool that panicked while holding the lock does not poison the store.
        self.items.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[toolbox]
impl Notes {
    /// Add a note and return how many there are.
    #[tool]
    pub async fn add(
        &self,
        /// The note's text.
        text: String,
    ) -> Result<usize, ToolError> {
        if text.trim().is_empty() {
            return Err(ToolError::with_code("EMPTY_NOTE", "a note needs some text"));
        }
        let mut items = self.lock();
        items.push(text);
        Ok(items.len())
    }

    /// List the notes, numbered from 1.
    #[tool(name = "list_notes", read_only)]
    pub async fn list(self: Arc<Self>, cx: &ToolContext) -> String {
        let items = self.lock();
        let mut out = format!(
            "{}'s notes ({} for {}):",
            self.owner,
            items.len(),
            cx.call_id()
        );
        for (i, item) in items.iter().enumerate() {
            out.push_str(&format!("\n{}. {item}", i + 1));
        }
        out
    }

    /// Remove every note and return how many were removed.
    #[tool(destructive)]
    pub async fn clear(&self) -> usize {
        let mut items = self.lock();
        let n = items.len();
        items.clear();
        n
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let notes = Arc::new(Notes {
        owner: "Ada".into(),
        items: Mutex::new(Vec::new()),
    });

    let registry = Registry::new();
    // The registry gets its own `Arc`; `notes` stays usable by the host.
    let tools = registry.register_toolbox(Arc::clone(&notes))?;
    let names: Vec<String> = registry
        .view()
        .names()
        .iter()
        .map(|n| n.to_string())
        .collect();
    println!("registered: {}", names.join(", "));
    for d in registry.view().schemas() {
        println!("{}: {}", d.name, d.parameters.to_json_string());
    }

    let calls = [
        ("1", "add", r#"{"text":"buy milk"}"#),
        ("2", "add", r#"{"text":"call Grace"}"#),
        ("3", "add", r#"{"text":"  "}"#),
        ("4", "list_notes", "{}"),
    ];
    for (id, name, args) in calls {
        let r = registry.execute(ToolCall::new(id, name, args)).await;
        match r.code_str() {
            Some(code) => println!("{name} -> error {code}: {}", r.message().unwrap_or("-")),
            None => println!("{name} -> {}", r.text()),
        }
    }

    // The host reads the same state the tools wrote.
    println!("host sees {} notes", notes.lock().len());

    let r = registry.execute(ToolCall::new("5", "clear", "{}")).await;
    println!("clear -> {}", r.text());
    println!("host sees {} notes", notes.lock().len());

    // The one registration unregisters the whole toolbox.
    tools.unregister();
    println!("after unregister: {} tools", registry.view().names().len());
    let r = registry
        .execute(ToolCall::new("6", "add", r#"{"text":"late"}"#))
        .await;
    println!("add -> {}", r.code_str().unwrap_or("-"));
    Ok(())
}
