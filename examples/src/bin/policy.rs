//! # Policy, guards, timeouts, typed calls and agent scopes
//!
//! What this teaches: everything a host decides around a call, in the order the pipeline
//! runs it. A pre-execute policy hook sees only arguments that passed validation and may
//! allow, deny, defer, or ask: an `ask` goes to the registry's approval handler (a person,
//! a prompt, a list), for calls from an agent scope and from the global view alike; a
//! refusal is `APPROVAL_REJECTED`. A guard runs after policy allowed the call, and its
//! denial is final. `#[tool(timeout_ms = N)]` gives a tool a deadline the built-in timeout wrapper
//! enforces (`TOOL_TIMEOUT`), cancelling the body's token so it can stop. From Rust, a
//! typed call (`registry.call::<T>(args)`) runs the same pipeline and returns the typed
//! output. An agent scope (`registry.scope()`) adds tools and hooks that only calls from
//! that scope see; it has the same reads and calls as the registry (`scope.view().schemas()`,
//! `scope.call::<T>(args)`).
//!
//! Run it with `cargo run -p examples --bin policy`.
//!
//! Read first: `toolbox`. Read next: `cards` (how a UI shows calls and results).

use dsh_runtime::hooks::{Approval, PreDecision, approval_fn, guard_fn, pre_execute_fn};
use dsh_runtime::{RegistrationHandle, Registry, ToolCall, ToolContext, ToolError, tool};

/// Read one of the project's documents (from a built-in table).
#[tool(read_only)]
async fn read_doc(
    /// The document's path, e.g. `guide/intro.md`.
    path: String,
) -> Result<String, ToolError> {
    match path.as_str() {
        "guide/intro.md" => Ok("Welcome to the guide.".into()),
        "guide/setup.md" => Ok("Install, then run.".into()),
        "ops/deploy.key" => Ok("-----BEGIN KEY-----".into()),
        "drafts/guide.md" => Ok("A better guide, soon.".into()),
        "drafts/plan.md" => Ok("The secret plan.".into()),
        _ => Err(ToolError::with_code(
            "NOT_FOUND",
            format!("no document {path:?}"),
        )),
    }
}

/// Wait for a (pretend) build to finish.
#[tool(timeout_ms = 50)]
async fn wait_for_build(cx: ToolContext) -> String {
    // Cooperate with cancellation: the timeout wrapper cancels this token at the deadline.
    cx.cancellation().cancelled().await;
    "stopped waiting".into()
}

/// Add two numbers (a tool only one agent gets).
#[tool(read_only)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn show(label: &str, r: &dsh_runtime::ToolResult) {
    match r.message() {
        Some(message) => println!(
            "{label}: denied or failed, code={} message={message}",
            r.code_str().unwrap_or("-")
        ),
        None => println!("{label}: ok {}", r.text()),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = Registry::new();
    let _read = registry.register(ReadDoc)?;
    let _wait = registry.register(WaitForBuild)?;
    // The hooks stay in place for the sections after their own.
    let _policy = policy_and_guard(&registry).await;
    let _approval = approval(&registry).await;
    timeout(&registry).await;
    typed_calls(&registry).await?;
    agent_scope(&registry).await?;
    Ok(())
}

/// A policy hook and a guard, and calls they allow, deny, or that fail validation.
async fn policy_and_guard(registry: &Registry) -> [RegistrationHandle; 2] {
    // Policy: a waterfall of hooks; `None` defers to the next one (the end allows).
    let policy = registry.add_pre_execute(pre_execute_fn(|call| {
        let path = call.arguments().as_object()?.get("path")?.as_str()?;
        path.ends_with(".key")
            .then(|| PreDecision::deny(format!("policy: {path} is a key file")))
    }));
    // A guard: after policy allowed the call, and nothing can undo its denial.
    let guard = registry.add_guard(guard_fn(|call| {
        let args = call.arguments().to_string();
        args.contains("..")
            .then(|| format!("guard: {} may not use `..` in paths", call.name()))
    }));

    println!("== policy and guard");
    let calls = [
        ("allowed", r#"{"path":"guide/intro.md"}"#),
        ("policy", r#"{"path":"ops/deploy.key"}"#),
        ("guard", r#"{"path":"guide/../guide/intro.md"}"#),
        ("invalid", r#"{"path":42}"#),
    ];
    for (label, args) in calls {
        let r = registry
            .execute(ToolCall::new(label, "read_doc", args))
            .await;
        show(label, &r);
    }

    [policy, guard]
}

/// A policy hook that asks, and the approval handler that answers.
async fn approval(registry: &Registry) -> [RegistrationHandle; 2] {
    println!("== approval");
    // Drafts need a person's yes: policy asks, and the approval handler answers (here a
    // stand-in that approves the guide and refuses the rest; a real host asks its user).
    let ask = registry.add_pre_execute(pre_execute_fn(|call| {
        let path = call.arguments().as_object()?.get("path")?.as_str()?;
        path.starts_with("drafts/")
            .then(|| PreDecision::ask(format!("{path} is a draft")))
    }));
    let approver = registry.set_approval_handler(approval_fn(|request| {
        let path = request.call.arguments().to_string();
        println!(
            "asked: {} ({}), from {}",
            request.call.name(),
            request.reason.unwrap_or("no reason"),
            if request.agent.is_some() {
                "an agent"
            } else {
                "the global view"
            }
        );
        if path.contains("drafts/guide") {
            Approval::AllowedOnce
        } else {
            Approval::Rejected
        }
    }));
    for (label, args) in [
        ("approved", r#"{"path":"drafts/guide.md"}"#),
        ("rejected", r#"{"path":"drafts/plan.md"}"#),
    ] {
        let r = registry
            .execute(ToolCall::new(label, "read_doc", args))
            .await;
        show(label, &r);
    }

    [ask, approver]
}

/// A tool past its deadline.
async fn timeout(registry: &Registry) {
    println!("== timeout");
    let r = registry
        .execute(ToolCall::new("t1", "wait_for_build", "{}"))
        .await;
    show("timeout", &r);
}

/// Typed calls: the output as its type, a denial as an `Err`.
async fn typed_calls(registry: &Registry) -> Result<(), Box<dyn std::error::Error>> {
    println!("== typed calls");
    let text: String = registry
        .call::<ReadDoc>(ReadDocArgs {
            path: "guide/setup.md".into(),
        })
        .await?;
    println!("typed: {text}");
    // The typed call went through policy too: a denial is an `Err`.
    match registry
        .call::<ReadDoc>(ReadDocArgs {
            path: "ops/deploy.key".into(),
        })
        .await
    {
        Ok(text) => println!("typed: unexpectedly read {text}"),
        Err(e) => println!("typed error: {e}"),
    }

    Ok(())
}

/// An agent scope's own tool and guard, and calls from it and from the global view.
async fn agent_scope(registry: &Registry) -> Result<(), Box<dyn std::error::Error>> {
    println!("== an agent scope");
    let agent = registry.scope();
    let _add = agent.register(Add)?;
    let _agent_guard = agent.add_guard(guard_fn(|call| {
        let args = call.arguments();
        let big = args
            .as_object()
            .and_then(|o| o.get("a"))
            .and_then(|a| a.as_i64())
            .is_some_and(|a| a.abs() > 1000);
        big.then(|| "guard: this agent only adds small numbers".to_string())
    }));
    let global: Vec<String> = registry
        .view()
        .names()
        .iter()
        .map(|n| n.to_string())
        .collect();
    let scoped: Vec<String> = agent.view().names().iter().map(|n| n.to_string()).collect();
    println!("global tools: {}", global.join(", "));
    println!("agent tools: {}", scoped.join(", "));

    let sum = agent.call::<Add>(AddArgs { a: 2, b: 40 }).await?;
    println!("agent typed: 2 + 40 = {sum}");
    match agent.call::<Add>(AddArgs { a: 5000, b: 1 }).await {
        Ok(sum) => println!("agent typed: unexpectedly got {sum}"),
        Err(e) => println!("agent typed error: {e}"),
    }
    // A call from the scope names it with `with_agent`; without it, `add` is unknown.
    let r = registry
        .execute(ToolCall::new("s1", "add", r#"{"a":1,"b":2}"#).with_agent(agent.id()))
        .await;
    show("scoped call", &r);
    let r = registry
        .execute(ToolCall::new("s2", "add", r#"{"a":1,"b":2}"#))
        .await;
    show("global call", &r);
    Ok(())
}
