//! Global changes as scopes see them: a change to the global layer rebuilds only the
//! global view, and each scope's view is rebuilt on its next use. Whatever a scope did or
//! did not read in between, it must see exactly what a fresh view would show.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::pipeline_support;

use dsh_runtime::hooks::{guard_fn, observer_fn, pre_execute_fn};
use dsh_runtime::json::Value;
use dsh_runtime::{AgentScope, AgentScopeId, RegistrationHandle, Registry, Restriction};
use pipeline_support::{Log, Probe, run, scope_names, tagged};

#[tokio::test]
async fn a_global_registration_reaches_scopes_created_and_used_earlier() {
    let registry = Registry::new();
    let log = Log::new();
    let _a = registry.register(tagged("a", "global a", &log)).unwrap();
    let preset = registry.scope();
    let agent = preset.child();
    let idle = registry.scope();
    let idle_child = idle.child();
    // Used before the change (their views are built)...
    assert_eq!(
        run(&registry, Some(agent.id()), "a").await.unwrap(),
        "global a"
    );
    assert_eq!(scope_names(&preset), ["a"]);

    let _b = registry.register(tagged("b", "global b", &log)).unwrap();
    let _c = registry.register(tagged("c", "global c", &log)).unwrap();
    // ...and each sees both later registrations on its next use, by call or by read,
    // whether its parent was used first or not.
    assert_eq!(
        run(&registry, Some(agent.id()), "b").await.unwrap(),
        "global b"
    );
    assert_eq!(scope_names(&agent), ["a", "b", "c"]);
    assert_eq!(scope_names(&preset), ["a", "b", "c"]);
    assert_eq!(scope_names(&idle_child), ["a", "b", "c"]);
    assert_eq!(scope_names(&idle), ["a", "b", "c"]);
    assert_eq!(
        run(&registry, Some(idle_child.id()), "c").await.unwrap(),
        "global c"
    );
    assert!(idle.view().get("c").is_some());
    let schemas: Vec<String> = agent
        .view()
        .schemas()
        .iter()
        .map(|d| d.name.to_string())
        .collect();
    assert_eq!(schemas, ["a", "b", "c"]);
    // Through the id-only view too.
    assert_eq!(registry.view_of(Some(idle.id())).names().len(), 3);
}

#[tokio::test]
async fn a_dropped_global_tool_disappears_from_every_scope() {
    let registry = Registry::new();
    let log = Log::new();
    let keep = registry.register(tagged("keep", "kept", &log)).unwrap();
    let gone = registry
        .register(tagged("gone", "global gone", &log))
        .unwrap();
    let scopes: Vec<AgentScope> = (0..5).map(|_| registry.scope()).collect();
    let children: Vec<AgentScope> = scopes.iter().map(AgentScope::child).collect();
    // Some views built, some never.
    for s in &scopes[..2] {
        assert_eq!(
            run(&registry, Some(s.id()), "gone").await.unwrap(),
            "global gone"
        );
    }
    assert_eq!(scope_names(&children[4]), ["keep", "gone"]);

    gone.unregister();
    for s in scopes.iter().chain(&children) {
        assert_eq!(scope_names(s), ["keep"], "{s:?}");
        assert!(s.view().get("gone").is_none());
        assert_eq!(
            run(&registry, Some(s.id()), "gone").await.unwrap_err(),
            r#"unknown tool "gone"; available tools: "keep""#
        );
    }
    keep.unregister();
    for s in children.iter().rev().chain(&scopes) {
        assert!(scope_names(s).is_empty(), "{s:?}");
        assert_eq!(
            run(&registry, Some(s.id()), "keep").await.unwrap_err(),
            r#"unknown tool "keep"; no tool is available"#
        );
    }
}

#[tokio::test]
async fn shadowing_survives_global_re_registration() {
    let registry = Registry::new();
    let log = Log::new();
    let _a = registry.register(tagged("a", "global a", &log)).unwrap();
    let scope = registry.scope();
    let child = scope.child();
    let _own = scope.register(tagged("t", "scoped t", &log)).unwrap();
    assert_eq!(scope_names(&child), ["a", "t"]);

    let global_t = registry.register(tagged("t", "global t", &log)).unwrap();
    let _z = registry.register(tagged("z", "global z", &log)).unwrap();
    // The scope's tool shadows the new global one in the global one's position.
    assert_eq!(registry.view().names().len(), 3);
    assert_eq!(scope_names(&scope), ["a", "t", "z"]);
    assert_eq!(scope_names(&child), ["a", "t", "z"]);
    assert_eq!(run(&registry, None, "t").await.unwrap(), "global t");
    assert_eq!(
        run(&registry, Some(child.id()), "t").await.unwrap(),
        "scoped t"
    );

    // Drop and register the global one again, reading nothing in between.
    global_t.unregister();
    let _again = registry
        .register(tagged("t", "global t again", &log))
        .unwrap();
    assert_eq!(scope_names(&scope), ["a", "z", "t"]);
    assert_eq!(
        run(&registry, Some(scope.id()), "t").await.unwrap(),
        "scoped t"
    );
    assert_eq!(
        run(&registry, Some(child.id()), "t").await.unwrap(),
        "scoped t"
    );
    assert_eq!(run(&registry, None, "t").await.unwrap(), "global t again");
}

#[tokio::test]
async fn global_hooks_registered_later_apply_to_scopes_in_registration_order() {
    let registry = Registry::new();
    let _t = registry.register(Probe::new("t", &Log::new())).unwrap();
    let scope = registry.scope();
    let child = scope.child();
    let log = Log::new();
    let pre = |tag: &'static str| {
        let l = log.clone();
        pre_execute_fn(move |_| {
            l.push(tag);
            None
        })
    };
    let guard = |tag: &'static str| {
        let l = log.clone();
        guard_fn(move |_| {
            l.push(tag);
            None
        })
    };
    let scoped_pre = scope.add_pre_execute(pre("scope pre 1"));
    run(&registry, Some(child.id()), "t").await.unwrap();
    assert_eq!(log.take(), ["scope pre 1"]);

    let global_pre = registry.add_pre_execute(pre("global pre"));
    let _scoped_pre_2 = scope.add_pre_execute(pre("scope pre 2"));
    let _global_guard = registry.add_guard(guard("global guard"));
    let _scoped_guard = child.add_guard(guard("child guard"));
    run(&registry, Some(child.id()), "t").await.unwrap();
    assert_eq!(
        log.take(),
        [
            "scope pre 1",
            "global pre",
            "scope pre 2",
            "global guard",
            "child guard"
        ]
    );
    global_pre.unregister();
    scoped_pre.unregister();
    run(&registry, Some(child.id()), "t").await.unwrap();
    assert_eq!(log.take(), ["scope pre 2", "global guard", "child guard"]);
    // A global observer added after the scope's last use sees its next call.
    let seen = Arc::new(AtomicUsize::new(0));
    let s = seen.clone();
    let _obs = registry.add_observer(observer_fn(move |_, _| {
        s.fetch_add(1, Ordering::SeqCst);
    }));
    run(&registry, Some(scope.id()), "t").await.unwrap();
    assert_eq!(seen.load(Ordering::SeqCst), 1);
}

#[test]
fn restrict_sees_global_tools_registered_after_the_scopes_last_use() {
    let registry = Registry::new();
    let log = Log::new();
    let _a = registry.register(tagged("a", "global a", &log)).unwrap();
    let scope = registry.scope();
    let child = scope.child();
    assert_eq!(scope_names(&child), ["a"]);
    let _b = registry.register(tagged("b", "global b", &log)).unwrap();
    // `b` is inherited although neither view was used since it was registered.
    child.restrict(Restriction::deny(["b"])).unwrap();
    assert_eq!(scope_names(&child), ["a"]);
    assert_eq!(scope_names(&scope), ["a", "b"]);
    let _c = registry.register(tagged("c", "global c", &log)).unwrap();
    scope.restrict(Restriction::allow(["a", "c"])).unwrap();
    assert_eq!(scope_names(&scope), ["a", "c"]);
    assert_eq!(scope_names(&child), ["a", "c"]);
}

#[tokio::test]
async fn a_scoped_call_re_resolves_a_global_tool_dropped_during_policy() {
    let registry = Registry::new();
    let log = Log::new();
    let reg = registry.register(tagged("t", "global t", &log)).unwrap();
    let scope = registry.scope();
    let slot: Arc<Mutex<Option<RegistrationHandle>>> = Arc::new(Mutex::new(Some(reg)));
    let s = slot.clone();
    // During policy, the global tool the call resolved is unregistered. The scope's view
    // object is not replaced by that (it goes stale), and the call must notice.
    let _g = scope.add_guard(guard_fn(move |_| {
        if let Some(reg) = s.lock().unwrap().take() {
            reg.unregister();
        }
        None
    }));
    assert_eq!(
        run(&registry, Some(scope.id()), "t").await.unwrap_err(),
        r#"unknown tool "t""#
    );
    assert!(log.get().iter().all(|entry| entry != "body"));
}

#[test]
fn a_global_change_moves_the_change_counter_once_and_reads_do_not() {
    let registry = Registry::new();
    let log = Log::new();
    let scopes: Vec<AgentScope> = (0..20).map(|_| registry.scope()).collect();
    let mut changes = registry.changes();
    let before = *changes.borrow_and_update();
    let reg = registry.register(tagged("a", "global a", &log)).unwrap();
    assert!(changes.has_changed().unwrap());
    assert_eq!(*changes.borrow_and_update(), before + 1);
    // Rebuilding the scopes' views on use is not a change.
    for s in &scopes {
        assert_eq!(scope_names(s), ["a"]);
    }
    assert!(!changes.has_changed().unwrap());
    // Hooks are not tool changes (as before), even though they make views stale.
    let hook = registry.add_pre_execute(pre_execute_fn(|_| None));
    assert_eq!(scope_names(&scopes[3]), ["a"]);
    assert!(!changes.has_changed().unwrap());
    hook.unregister();
    reg.unregister();
    assert_eq!(*changes.borrow_and_update(), before + 2);
    assert!(scope_names(&scopes[7]).is_empty());
    assert!(!changes.has_changed().unwrap());
}

#[test]
fn a_dropped_global_tool_is_released_once_every_scope_moved_on() {
    struct Counted(Probe, Arc<AtomicUsize>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.1.fetch_add(1, Ordering::SeqCst);
        }
    }
    impl dsh_runtime::Tool for Counted {
        type Args = Value;
        type Output = Value;
        fn definition(&self) -> &dsh_runtime::ToolDefinition {
            self.0.definition()
        }
        fn call(
            &self,
            args: Value,
            cx: dsh_runtime::ToolContext,
        ) -> impl Future<Output = Result<Value, dsh_runtime::ToolError>> + Send {
            self.0.call(args, cx)
        }
    }
    let registry = Registry::new();
    let dropped = Arc::new(AtomicUsize::new(0));
    let reg = registry
        .register(Counted(Probe::new("t", &Log::new()), dropped.clone()))
        .unwrap();
    let used = registry.scope();
    let idle = registry.scope();
    assert_eq!(scope_names(&used), ["t"]);
    assert_eq!(scope_names(&idle), ["t"]);
    reg.unregister();
    // The global view let go; the scopes' views let go when next used or removed.
    assert_eq!(scope_names(&used), Vec::<String>::new());
    drop(idle);
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
}

#[test]
fn scoped_reads_race_global_changes_consistently() {
    use std::sync::atomic::AtomicBool;

    let registry = Registry::new();
    let quiet = Log::new();
    let _a = registry.register(Probe::new("a", &quiet)).unwrap();
    let preset = registry.scope();
    let scopes: Vec<AgentScope> = vec![preset.child(), preset.child(), registry.scope()];
    let _own: Vec<RegistrationHandle> = scopes
        .iter()
        .map(|s| s.register(Probe::new("own", &quiet)).unwrap())
        .collect();
    let done = Arc::new(AtomicBool::new(false));
    let churn = std::thread::spawn({
        let (registry, done, quiet) = (registry.clone(), done.clone(), quiet.clone());
        move || {
            let mut rounds = 0;
            while !done.load(Ordering::SeqCst) || rounds < 100 {
                let b = registry.register(Probe::new("b", &quiet)).unwrap();
                let hook = registry.add_pre_execute(pre_execute_fn(|_| None));
                b.unregister();
                hook.unregister();
                rounds += 1;
            }
            rounds
        }
    });
    let readers: Vec<_> = scopes
        .iter()
        .cloned()
        .chain([scopes[0].clone()])
        .map(|scope| {
            std::thread::spawn(move || {
                for _ in 0..2_000 {
                    let names = scope_names(&scope);
                    assert!(
                        names == ["a", "own"] || names == ["a", "b", "own"],
                        "{names:?}"
                    );
                    let b = scope.view().get("b");
                    assert!(b.is_none_or(|t| &*t.definition().name == "b"));
                }
            })
        })
        .collect();
    for r in readers {
        r.join().unwrap();
    }
    done.store(true, Ordering::SeqCst);
    assert!(churn.join().unwrap() >= 100);
    assert_eq!(scope_names(&scopes[1]), ["a", "own"]);
}

#[test]
fn a_tool_released_by_a_scope_rebuild_can_use_the_registry_in_its_drop() {
    // The stale view a rebuild replaces is the dropped tool's last holder: its `Drop`
    // (user code) runs once the registry's locks are released, so it can change the
    // registry (which takes them) without deadlocking.
    struct ChangesRegistryOnDrop {
        probe: Probe,
        registry: Registry,
        scope: AgentScopeId,
        seen: Seen,
    }
    impl Drop for ChangesRegistryOnDrop {
        fn drop(&mut self) {
            let late = self
                .registry
                .register(Probe::new("late", &Log::new()))
                .unwrap();
            let names = self.registry.view_of(Some(self.scope)).names();
            *self.seen.lock().unwrap() = Some(names.iter().map(|n| n.to_string()).collect());
            late.unregister();
        }
    }
    impl dsh_runtime::Tool for ChangesRegistryOnDrop {
        type Args = Value;
        type Output = Value;
        fn definition(&self) -> &dsh_runtime::ToolDefinition {
            self.probe.definition()
        }
        fn call(
            &self,
            args: Value,
            cx: dsh_runtime::ToolContext,
        ) -> impl Future<Output = Result<Value, dsh_runtime::ToolError>> + Send {
            self.probe.call(args, cx)
        }
    }
    // A deadlock fails the test instead of hanging it.
    let (done, finished) = std::sync::mpsc::channel();
    let run = std::thread::spawn(move || {
        released_by_rebuild::<ChangesRegistryOnDrop>(|registry, scope, seen| {
            ChangesRegistryOnDrop {
                probe: Probe::new("t", &Log::new()),
                registry,
                scope,
                seen,
            }
        });
        done.send(()).unwrap();
    });
    match finished.recv_timeout(std::time::Duration::from_secs(60)) {
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("deadlock: the dropped tool's `Drop` could not take the registry's locks")
        }
        // Finished, or panicked (the join reports it).
        _ => run.join().unwrap(),
    }
}

type Seen = Arc<Mutex<Option<Vec<String>>>>;

fn released_by_rebuild<T: dsh_runtime::Tool>(make: impl FnOnce(Registry, AgentScopeId, Seen) -> T) {
    let registry = Registry::new();
    let scope = registry.scope();
    let _own = scope.register(Probe::new("own", &Log::new())).unwrap();
    let seen = Arc::new(Mutex::new(None));
    let reg = registry
        .register(make(registry.clone(), scope.id(), seen.clone()))
        .unwrap();
    assert_eq!(scope_names(&scope), ["t", "own"]);
    reg.unregister();
    // The scope's stale view still holds it: the rebuild below is what releases it.
    assert!(seen.lock().unwrap().is_none());
    assert_eq!(scope_names(&scope), ["own"]);
    assert_eq!(
        *seen.lock().unwrap(),
        Some(vec!["late".to_string(), "own".to_string()])
    );
    assert_eq!(scope_names(&scope), ["own"]);
}
