//! Registration: handles and drop-guards, duplicates, reserved and invalid names,
//! schema checks, all-or-nothing toolboxes, change notifications.

use crate::pipeline_support;

use std::sync::Arc;

use dsh_runtime::hooks::guard_fn;
use dsh_runtime::json::Value;
use dsh_runtime::schema::{Property, Schema};
use dsh_runtime::{DynTool, PipelineCode, RegisterError, Registry, ToolCall, Toolbox};
use pipeline_support::{Log, Probe};

fn names(r: &Registry) -> Vec<String> {
    r.view().names().iter().map(|n| n.to_string()).collect()
}

fn scope_names(s: &dsh_runtime::AgentScope) -> Vec<String> {
    s.view().names().iter().map(|n| n.to_string()).collect()
}

#[tokio::test]
async fn dropping_a_guard_removes_exactly_that_entry() {
    let registry = Registry::new();
    let log = Log::new();
    let a = registry
        .register(Probe::new("a", &log))
        .unwrap()
        .unregister_on_drop();
    let _b = registry.register(Probe::new("b", &log)).unwrap();
    assert_eq!(names(&registry), ["a", "b"]);
    drop(a);
    assert_eq!(names(&registry), ["b"]);
    let r = registry
        .execute(ToolCall::new("1", "a", r#"{"text":"x"}"#))
        .await;
    assert_eq!(r.code_str(), Some("UNKNOWN_TOOL"));
    // Re-registering appends in registration order.
    let a = registry.register(Probe::new("a", &log)).unwrap();
    assert_eq!(names(&registry), ["b", "a"]);
    a.unregister();
    assert_eq!(names(&registry), ["b"]);
}

#[test]
fn unregistering_is_idempotent_and_survives_the_registry() {
    let registry = Registry::new();
    let log = Log::new();
    let a = registry.register(Probe::new("a", &log)).unwrap();
    assert!(a.is_registered());
    // A stale handle cannot remove a newer entry of the same name.
    let b = registry.register(Probe::new("b", &log)).unwrap();
    b.clone().unregister();
    assert!(!b.is_registered());
    let _b2 = registry.register(Probe::new("b", &log)).unwrap();
    b.unregister();
    assert_eq!(names(&registry), ["a", "b"]);
    drop(registry);
    assert!(!a.is_registered());
    a.unregister();
}

#[test]
#[allow(clippy::let_underscore_must_use)]
fn let_underscore_leaves_the_tool_registered() {
    let registry = Registry::new();
    let log = Log::new();
    // What rustc's unused-result help suggests: the registry owns the tool.
    let _ = registry.register(Probe::new("a", &log)).unwrap();
    assert_eq!(names(&registry), ["a"]);
    let _ = registry.add_guard(guard_fn(|_| Some("held".to_string())));
    assert!(
        registry
            .view()
            .get("a")
            .is_some_and(|t| t.definition().name == "a")
    );
    // Dropping the handle does nothing either.
    let handle = registry.register(Probe::new("b", &log)).unwrap();
    drop(handle);
    assert_eq!(names(&registry), ["a", "b"]);
}

#[tokio::test]
async fn a_dropped_hook_handle_keeps_the_hook_and_a_guard_removes_it() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry.register(Probe::new("a", &log)).unwrap();
    let call = || ToolCall::new("1", "a", r#"{"text":"x"}"#);
    let _ = registry.add_guard(guard_fn(|_| Some("first".to_string())));
    assert_eq!(registry.execute(call()).await.message(), Some("first"));
    let scope = registry.scope();
    {
        let _g = scope
            .add_guard(guard_fn(|_| Some("scoped".to_string())))
            .unregister_on_drop();
    }
    let r = registry
        .execute(ToolCall::new("2", "a", r#"{"text":"x"}"#).with_agent(scope.id()))
        .await;
    assert_eq!(r.message(), Some("first"));
    // Disarming a guard keeps the registration.
    let kept = registry
        .register(Probe::new("b", &log))
        .unwrap()
        .unregister_on_drop()
        .into_registration();
    assert!(kept.is_registered());
    assert_eq!(names(&registry), ["a", "b"]);
}

#[test]
fn duplicates_in_a_layer_are_refused_and_change_nothing() {
    let registry = Registry::new();
    let log = Log::new();
    let _a = registry.register(Probe::new("read", &log)).unwrap();
    let mut changes = registry.changes();
    changes.mark_unchanged();
    let err = registry.register(Probe::new("read", &log)).unwrap_err();
    assert_eq!(
        err,
        RegisterError::Duplicate {
            name: "read".into(),
            scoped: false
        }
    );
    assert_eq!(
        err.to_string(),
        r#"tool "read" is already registered (unregister it first, or register the new one in an agent scope to shadow it)"#
    );
    assert_eq!(err.code(), None);
    assert!(!changes.has_changed().unwrap());

    let scope = registry.scope();
    let _s = scope.register(Probe::new("read", &log)).unwrap();
    let err = scope.register(Probe::new("read", &log)).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"tool "read" is already registered in this scope (unregister it first, or register the new one in a child scope to shadow it)"#
    );
}

#[test]
fn run_code_is_reserved_everywhere() {
    let registry = Registry::new();
    let log = Log::new();
    let err = registry.register(Probe::new("run_code", &log)).unwrap_err();
    assert_eq!(err, RegisterError::Reserved);
    assert_eq!(
        err.to_string(),
        r#"tool name "run_code" is reserved for code mode"#
    );
    let scope = registry.scope();
    assert_eq!(
        scope.register(Probe::new("run_code", &log)).unwrap_err(),
        RegisterError::Reserved
    );
}

#[test]
fn names_must_match_the_provider_rule() {
    let registry = Registry::new();
    let log = Log::new();
    let long: &'static str = Box::leak("x".repeat(65).into_boxed_str());
    let max: &'static str = Box::leak("y".repeat(64).into_boxed_str());
    for bad in ["", "has space", "dot.ted", "ümlaut", long] {
        let err = registry.register(Probe::new(bad, &log)).unwrap_err();
        assert_eq!(
            err,
            RegisterError::InvalidName { name: bad.into() },
            "{bad:?}"
        );
    }
    assert_eq!(
        registry
            .register(Probe::new("has space", &log))
            .unwrap_err()
            .to_string(),
        r#"invalid tool name "has space": a name must be 1 to 64 characters from [a-zA-Z0-9_-]"#
    );
    let _ok = registry.register(Probe::new("a-b_C9", &log)).unwrap();
    let _ok2 = registry.register(Probe::new(max, &log)).unwrap();
}

#[test]
fn schemas_are_checked_at_registration() {
    let registry = Registry::new();
    let log = Log::new();
    let dup = Schema::closed_object(vec![
        Property::new("a", Schema::string(), true),
        Property::new("a", Schema::string(), false),
    ]);
    let err = registry
        .register(Probe::new("t", &log).params(dup))
        .unwrap_err();
    assert_eq!(err.code(), Some(PipelineCode::UnsupportedSchema));
    assert_eq!(
        err.to_string(),
        r#"tool "t": unsupported JSON schema: parameters: property "a" is declared twice"#
    );

    let err = registry
        .register(Probe::new("t", &log).params(Schema::string()))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"tool "t": unsupported JSON schema: parameters: a tool's parameters must be an object schema, found string"#
    );

    let err = registry
        .register(Probe::new("t", &log).output(Schema::boolean().with_enum(vec![Value::from("x")])))
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with(r#"tool "t": unsupported JSON schema: output"#),
        "{err}"
    );
    assert!(registry.view().names().is_empty());
}

struct Pair {
    first: &'static str,
    second: &'static str,
    log: Log,
}

impl Toolbox for Pair {
    fn tools(self: Arc<Self>) -> Vec<DynTool> {
        vec![
            DynTool::new(Probe::new(self.first, &self.log)),
            DynTool::new(Probe::new(self.second, &self.log)),
        ]
    }
}

#[test]
fn toolboxes_register_all_or_nothing() {
    let registry = Registry::new();
    let log = Log::new();
    let _x = registry.register(Probe::new("x", &log)).unwrap();
    let err = registry
        .register_toolbox(Arc::new(Pair {
            first: "a",
            second: "x",
            log: log.clone(),
        }))
        .unwrap_err();
    assert_eq!(
        err,
        RegisterError::Duplicate {
            name: "x".into(),
            scoped: false
        }
    );
    assert_eq!(names(&registry), ["x"]);

    let err = registry
        .register_toolbox(Arc::new(Pair {
            first: "b",
            second: "b",
            log: log.clone(),
        }))
        .unwrap_err();
    assert!(matches!(err, RegisterError::Duplicate { .. }));
    assert_eq!(names(&registry), ["x"]);

    let both = registry
        .register_toolbox(Arc::new(Pair {
            first: "a",
            second: "b",
            log: log.clone(),
        }))
        .unwrap();
    assert_eq!(names(&registry), ["x", "a", "b"]);
    both.unregister();
    assert_eq!(names(&registry), ["x"]);

    let scope = registry.scope();
    let _in_scope = scope
        .register_toolbox(Arc::new(Pair {
            first: "x",
            second: "y",
            log: log.clone(),
        }))
        .unwrap();
    assert_eq!(scope_names(&scope), ["x", "y"]);
}

#[tokio::test]
async fn register_in_and_register_dyn() {
    let registry = Registry::new();
    let log = Log::new();
    let _g = registry
        .register_dyn(DynTool::new(Probe::new("g", &log)))
        .unwrap();
    let scope = registry.scope();
    let _s = registry
        .register_in(scope.id(), Probe::new("s", &log))
        .unwrap();
    assert_eq!(scope_names(&scope), ["g", "s"]);
    assert_eq!(names(&registry), ["g"]);
    let id = scope.id();
    drop(scope);
    let err = registry.register_in(id, Probe::new("s", &log)).unwrap_err();
    assert_eq!(err, RegisterError::ScopeGone { scope: id });
    assert_eq!(
        registry
            .view()
            .get("g")
            .map(|t| t.definition().name.to_string()),
        Some("g".to_string())
    );
    assert!(registry.view().get("s").is_none());
}

#[tokio::test]
async fn unregistering_a_hook_removes_the_hook() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry.register(Probe::new("t", &log)).unwrap();
    let guard = registry.add_guard(guard_fn(|_| Some("denied".into())));
    let call = || ToolCall::new("1", "t", r#"{"text":"x"}"#);
    assert_eq!(registry.execute(call()).await.message(), Some("denied"));
    guard.unregister();
    assert!(registry.execute(call()).await.is_success());
}

#[test]
fn change_notifications_follow_the_tool_set_not_the_hooks() {
    let registry = Registry::new();
    let log = Log::new();
    let mut rx = registry.changes();
    rx.mark_unchanged();
    let a = registry.register(Probe::new("a", &log)).unwrap();
    assert!(rx.has_changed().unwrap());
    rx.mark_unchanged();
    let g = registry.add_guard(guard_fn(|_| None));
    g.unregister();
    assert!(!rx.has_changed().unwrap());
    let scope = registry.scope();
    rx.mark_unchanged();
    scope
        .restrict(dsh_runtime::Restriction::deny(["a"]))
        .unwrap();
    assert!(rx.has_changed().unwrap());
    rx.mark_unchanged();
    a.unregister();
    assert!(rx.has_changed().unwrap());
}

#[test]
fn every_listing_reads_one_snapshot_under_concurrent_changes() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    let registry = Registry::new();
    let log = Log::new();
    let _a = registry.register(Probe::new("a", &log)).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    // A toolbox registers and unregisters both of its tools at once: a listing from one
    // snapshot has both or neither.
    let churn = std::thread::spawn({
        let (registry, log, done) = (registry.clone(), log.clone(), done.clone());
        move || {
            let mut rounds = 0u32;
            while !done.load(Ordering::SeqCst) && rounds < 200_000 {
                let pair = registry
                    .register_toolbox(Arc::new(Pair {
                        first: "x",
                        second: "y",
                        log: log.clone(),
                    }))
                    .unwrap();
                pair.unregister();
                rounds += 1;
            }
            rounds
        }
    });
    let scope = registry.scope();
    let deadline = Instant::now() + Duration::from_secs(5);
    let (mut with, mut without) = (0u32, 0u32);
    for _ in 0..20_000 {
        if Instant::now() > deadline {
            break;
        }
        for view in [registry.view(), scope.view()] {
            let defs: Vec<String> = view
                .definitions()
                .iter()
                .map(|d| d.name.to_string())
                .collect();
            match defs.as_slice() {
                [a] if a == "a" => without += 1,
                [a, x, y] if a == "a" && x == "x" && y == "y" => with += 1,
                other => panic!("a listing mixed two states: {other:?}"),
            }
            // The reads of one view agree with each other.
            let names: Vec<String> = view.names().iter().map(|n| n.to_string()).collect();
            let schemas: Vec<String> = view.schemas().iter().map(|d| d.name.to_string()).collect();
            let tools: Vec<String> = view
                .tools()
                .iter()
                .map(|t| t.definition().name.to_string())
                .collect();
            assert_eq!(names, defs);
            assert_eq!(schemas, defs);
            assert_eq!(tools, defs);
            assert_eq!(view.get("x").is_some(), defs.len() == 3);
        }
    }
    done.store(true, Ordering::SeqCst);
    let rounds = churn.join().unwrap();
    assert!(
        rounds > 0 && with + without > 0,
        "{rounds} rounds, {with} + {without} reads"
    );
}
