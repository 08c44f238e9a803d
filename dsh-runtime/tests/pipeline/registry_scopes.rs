//! Scopes: views, shadowing, restrict masks, scoped hooks, lifetimes.

use crate::pipeline_support;

use dsh_runtime::hooks::{guard_fn, observer_fn, pre_execute_fn};
use dsh_runtime::{Registry, RestrictError, Restriction};
use pipeline_support::{Log, Probe, run, scope_names, tagged};

fn names(r: &Registry) -> Vec<String> {
    r.view().names().iter().map(|n| n.to_string()).collect()
}

#[tokio::test]
async fn scoped_tools_shadow_in_place_for_the_scope_and_its_descendants() {
    let registry = Registry::new();
    let log = Log::new();
    let _a = registry.register(tagged("a", "global a", &log)).unwrap();
    let _b = registry.register(tagged("b", "global b", &log)).unwrap();
    let _c = registry.register(tagged("c", "global c", &log)).unwrap();
    let preset = registry.scope();
    let agent = preset.child();
    let sibling = registry.scope();
    let _pb = preset.register(tagged("b", "preset b", &log)).unwrap();
    let _pd = preset.register(tagged("d", "preset d", &log)).unwrap();
    let _aa = agent.register(tagged("a", "agent a", &log)).unwrap();
    let _ae = agent.register(tagged("e", "agent e", &log)).unwrap();

    assert_eq!(names(&registry), ["a", "b", "c"]);
    assert_eq!(scope_names(&preset), ["a", "b", "c", "d"]);
    assert_eq!(scope_names(&agent), ["a", "b", "c", "d", "e"]);
    assert_eq!(scope_names(&sibling), ["a", "b", "c"]);

    assert_eq!(run(&registry, None, "b").await.unwrap(), "global b");
    assert_eq!(
        run(&registry, Some(preset.id()), "b").await.unwrap(),
        "preset b"
    );
    assert_eq!(
        run(&registry, Some(agent.id()), "b").await.unwrap(),
        "preset b"
    );
    assert_eq!(
        run(&registry, Some(agent.id()), "a").await.unwrap(),
        "agent a"
    );
    assert_eq!(
        run(&registry, Some(preset.id()), "a").await.unwrap(),
        "global a"
    );
    assert_eq!(
        run(&registry, Some(sibling.id()), "d").await.unwrap_err(),
        r#"unknown tool "d"; available tools: "a", "b", "c""#
    );
    assert_eq!(
        run(&registry, None, "e").await.unwrap_err(),
        r#"unknown tool "e"; available tools: "a", "b", "c""#
    );
}

#[test]
fn schemas_are_byte_stable_and_in_view_order() {
    let registry = Registry::new();
    let log = Log::new();
    let _z = registry.register(Probe::new("zeta", &log)).unwrap();
    let _a = registry.register(Probe::new("alpha", &log)).unwrap();
    let scope = registry.scope();
    let _own = scope.register(Probe::new("zeta", &log)).unwrap();
    let json = scope.view().schemas_json();
    let params = r#"{"type":"object","additionalProperties":false,"properties":{"text":{"type":"string"},"n":{"type":"integer"}},"required":["text"]}"#;
    assert_eq!(
        json,
        format!(
            r#"[{{"name":"zeta","description":"The zeta probe.","parameters":{params}}},{{"name":"alpha","description":"The alpha probe.","parameters":{params}}}]"#
        )
    );
    assert_eq!(scope.view().schemas_json(), json);
    let list = scope.view().schemas();
    // Through serde the content is the same (key order is the json module's business).
    assert_eq!(
        serde_json::to_value(&list).unwrap(),
        serde_json::from_str::<serde_json::Value>(&json).unwrap()
    );
    assert_eq!(&*list[0].name, "zeta");
}

#[tokio::test]
async fn deny_masks_hide_inherited_tools_and_admit_later_globals() {
    let registry = Registry::new();
    let log = Log::new();
    let _a = registry.register(Probe::new("a", &log)).unwrap();
    let _b = registry.register(Probe::new("b", &log)).unwrap();
    let scope = registry.scope();
    scope.restrict(Restriction::deny(["a"])).unwrap();
    assert_eq!(scope_names(&scope), ["b"]);
    assert_eq!(
        run(&registry, Some(scope.id()), "a").await.unwrap_err(),
        r#"unknown tool "a"; available tools: "b""#
    );
    assert!(scope.view().get("a").is_none());
    let _c = registry.register(Probe::new("c", &log)).unwrap();
    assert_eq!(scope_names(&scope), ["b", "c"]);
    // The global view is unaffected.
    assert_eq!(names(&registry), ["a", "b", "c"]);
}

#[test]
fn allow_masks_keep_only_the_listed_names_and_exclude_later_globals() {
    let registry = Registry::new();
    let log = Log::new();
    let _a = registry.register(Probe::new("a", &log)).unwrap();
    let _b = registry.register(Probe::new("b", &log)).unwrap();
    let scope = registry.scope();
    scope.restrict(Restriction::allow(["b"])).unwrap();
    assert_eq!(scope_names(&scope), ["b"]);
    let _c = registry.register(Probe::new("c", &log)).unwrap();
    assert_eq!(scope_names(&scope), ["b"]);
}

#[test]
fn masks_never_hide_the_scopes_own_tools() {
    let registry = Registry::new();
    let log = Log::new();
    let _a = registry.register(Probe::new("a", &log)).unwrap();
    let _b = registry.register(Probe::new("b", &log)).unwrap();
    let scope = registry.scope();
    scope.restrict(Restriction::allow(["b"])).unwrap();
    let _own_a = scope.register(Probe::new("a", &log)).unwrap();
    let _own_z = scope.register(Probe::new("z", &log)).unwrap();
    // The inherited `a` is masked; the scope's own `a` is appended.
    assert_eq!(scope_names(&scope), ["b", "a", "z"]);
}

#[test]
fn masks_intersect_along_the_chain() {
    let registry = Registry::new();
    let log = Log::new();
    let _a = registry.register(Probe::new("a", &log)).unwrap();
    let _b = registry.register(Probe::new("b", &log)).unwrap();
    let _c = registry.register(Probe::new("c", &log)).unwrap();
    let preset = registry.scope();
    preset.restrict(Restriction::deny(["a"])).unwrap();
    let agent = preset.child();
    // `a` is not inherited by the agent any more.
    let err = agent.restrict(Restriction::allow(["a"])).unwrap_err();
    assert_eq!(
        err,
        RestrictError::Unknown {
            names: vec!["a".into()],
            known: vec!["b".into(), "c".into()]
        }
    );
    agent.restrict(Restriction::allow(["b", "c"])).unwrap();
    agent.restrict(Restriction::deny(["c"])).unwrap();
    assert_eq!(scope_names(&agent), ["b"]);
    assert_eq!(scope_names(&preset), ["b", "c"]);
}

#[test]
fn restrict_errors() {
    let registry = Registry::new();
    let log = Log::new();
    let _z = registry.register(Probe::new("zed", &log)).unwrap();
    let _a = registry.register(Probe::new("alpha", &log)).unwrap();
    let scope = registry.scope();
    let _own = scope.register(Probe::new("mine", &log)).unwrap();

    let err = scope.restrict(Restriction::default()).unwrap_err();
    assert_eq!(err, RestrictError::EmptyFilter);
    assert_eq!(
        err.to_string(),
        "restrict needs an `allow` or a `deny` list"
    );

    let err = scope.restrict(Restriction::deny(["run_code"])).unwrap_err();
    assert_eq!(err.to_string(), r#""run_code" cannot be restricted"#);

    let err = scope.restrict(Restriction::deny(["mine"])).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"tool "mine" is registered in this scope; restrict only hides inherited tools"#
    );

    let err = scope
        .restrict(Restriction::allow(["alpha", "nope"]).and_deny(["gone"]))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"unknown tools "nope", "gone"; inherited tools are: "alpha", "zed""#
    );
    // Nothing changed.
    assert_eq!(scope_names(&scope), ["zed", "alpha", "mine"]);

    let empty = Registry::new().scope();
    assert_eq!(
        empty
            .restrict(Restriction::deny(["x"]))
            .unwrap_err()
            .to_string(),
        r#"unknown tool "x"; this scope inherits no tools"#
    );

    let id = scope.id();
    drop(scope);
    assert_eq!(
        registry
            .restrict(id, Restriction::deny(["zed"]))
            .unwrap_err(),
        RestrictError::ScopeGone { scope: id }
    );
}

#[tokio::test]
async fn guards_run_global_first_then_the_chain_farthest_to_nearest() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry.register(Probe::new("t", &Log::new())).unwrap();
    let preset = registry.scope();
    let agent = preset.child();
    let g = |tag: &'static str| {
        let l = log.clone();
        guard_fn(move |_| {
            l.push(tag);
            None
        })
    };
    // Registered in a scrambled order across layers.
    let _guards = [
        agent.add_guard(g("agent 1")),
        registry.add_guard(g("global 1")),
        preset.add_guard(g("preset 1")),
        agent.add_guard(g("agent 2")),
        registry.add_guard(g("global 2")),
    ];
    run(&registry, Some(agent.id()), "t").await.unwrap();
    assert_eq!(
        log.take(),
        ["global 1", "global 2", "preset 1", "agent 1", "agent 2"]
    );
    run(&registry, Some(preset.id()), "t").await.unwrap();
    assert_eq!(log.take(), ["global 1", "global 2", "preset 1"]);
    run(&registry, None, "t").await.unwrap();
    assert_eq!(log.take(), ["global 1", "global 2"]);
}

#[tokio::test]
async fn scoped_listeners_see_only_calls_from_their_scope_and_below() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry.register(Probe::new("t", &Log::new())).unwrap();
    let preset = registry.scope();
    let agent = preset.child();
    let sibling = registry.scope();
    let (a, b, c) = (log.clone(), log.clone(), log.clone());
    let _pre = preset.add_pre_execute(pre_execute_fn(move |call| {
        a.push(format!("preset pre {:?}", call.agent().map(|s| s.get())));
        None
    }));
    let _obs = preset.add_observer(observer_fn(move |_, _| b.push("preset observe")));
    let _global = registry.add_pre_execute(pre_execute_fn(move |_| {
        c.push("global pre");
        None
    }));
    run(&registry, None, "t").await.unwrap();
    assert_eq!(log.take(), ["global pre"]);
    run(&registry, Some(sibling.id()), "t").await.unwrap();
    assert_eq!(log.take(), ["global pre"]);
    run(&registry, Some(agent.id()), "t").await.unwrap();
    assert_eq!(
        log.take(),
        [
            format!("preset pre {:?}", Some(agent.id().get())),
            "global pre".to_string(),
            "preset observe".to_string()
        ]
    );
}

#[tokio::test]
async fn a_child_scope_keeps_its_parent_alive() {
    let registry = Registry::new();
    let log = Log::new();
    let preset = registry.scope();
    let _p = preset.register(tagged("p", "preset p", &log)).unwrap();
    let preset_id = preset.id();
    let agent = preset.child();
    drop(preset);
    assert_eq!(
        run(&registry, Some(agent.id()), "p").await.unwrap(),
        "preset p"
    );
    assert_eq!(
        run(&registry, Some(preset_id), "p").await.unwrap(),
        "preset p"
    );
    drop(agent);
    // Both scopes are gone: a call naming them sees no tools.
    assert_eq!(
        run(&registry, Some(preset_id), "p").await.unwrap_err(),
        r#"unknown tool "p"; no tool is available"#
    );
}

#[tokio::test]
async fn dropping_a_scope_removes_its_tools_and_hooks() {
    let registry = Registry::new();
    let log = Log::new();
    let _g = registry.register(tagged("t", "global", &log)).unwrap();
    let scope = registry.scope();
    let clone = scope.clone();
    let reg = scope.register(tagged("t", "scoped", &log)).unwrap();
    let l = log.clone();
    let hook = registry.add_observer(observer_fn(move |call, _| {
        l.push(format!(
            "global observer sees agent {:?}",
            call.agent().is_some()
        ))
    }));
    let id = scope.id();
    drop(scope);
    // A clone keeps the scope.
    assert_eq!(run(&registry, Some(id), "t").await.unwrap(), "scoped");
    drop(clone);
    // Plain listeners still see calls naming a vanished scope.
    log.take();
    assert_eq!(
        run(&registry, Some(id), "t").await.unwrap_err(),
        r#"unknown tool "t"; no tool is available"#
    );
    assert_eq!(log.take(), ["global observer sees agent true"]);
    // The registration of the vanished scope is inert.
    reg.unregister();
    hook.unregister();
    assert_eq!(names(&registry), ["t"]);
}

/// A reference model of the views: each scope's view recomputed from scratch.
mod model {
    /// A layer's tools: registration number and name.
    pub(crate) type Tools = Vec<(u64, String)>;
    /// A scope: parent slot, own tools, denied names.
    pub(crate) type ScopeModel = (Option<usize>, Tools, Vec<String>);

    #[derive(Default)]
    pub(crate) struct Model {
        pub global: Tools,
        /// Index = scope slot; `None` once dropped.
        pub scopes: Vec<Option<ScopeModel>>,
    }

    impl Model {
        pub(crate) fn view(&self, slot: Option<usize>) -> Vec<String> {
            let Some(slot) = slot else {
                return self.global.iter().map(|(_, n)| n.clone()).collect();
            };
            let Some((parent, own, denied)) = &self.scopes[slot] else {
                return Vec::new();
            };
            let mut names: Vec<String> = self
                .view(*parent)
                .into_iter()
                .filter(|n| !denied.contains(n))
                .collect();
            for (_, n) in own {
                if !names.contains(n) {
                    names.push(n.clone());
                }
            }
            names
        }
    }
}

#[test]
fn many_scopes_stay_correct_under_changes() {
    drive_model(0x2545_f491_4f6c_dd1d, true);
}

/// The same random changes, but each step reads one scope at most (and the global view),
/// so most views go through many global changes unread; every view is checked at the end.
#[test]
fn many_scopes_stay_correct_when_read_rarely() {
    drive_model(0x9e37_79b9_7f4a_7c15, false);
}

/// Random changes to a registry and to a model of it; after each step, every live view
/// (`read_all`) or one random live scope's view is compared with the model's.
fn drive_model(seed: u64, read_all: bool) {
    use dsh_runtime::{AgentScope, RegistrationHandle};
    use std::collections::HashMap;

    let registry = Registry::new();
    let log = Log::new();
    let mut model = model::Model::default();
    let mut handles: Vec<Option<AgentScope>> = Vec::new();
    let mut regs: HashMap<u64, (Option<usize>, RegistrationHandle)> = HashMap::new();
    let mut next_reg = 0u64;
    // A deterministic pseudo-random sequence (no seed to pass around, reproducible).
    let mut state = seed;
    let mut rand = move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n.max(1) as u64) as usize
    };
    let live = |handles: &Vec<Option<AgentScope>>| -> Vec<usize> {
        (0..handles.len())
            .filter(|&i| handles[i].is_some())
            .collect()
    };

    for step in 0..600 {
        let live_slots = live(&handles);
        match rand(10) {
            // New scopes (most steps early on): top-level, or below a live scope.
            0..=3 if handles.len() < 250 => {
                let parent = if live_slots.is_empty() || rand(3) == 0 {
                    None
                } else {
                    Some(live_slots[rand(live_slots.len())])
                };
                let scope = match parent {
                    None => registry.scope(),
                    Some(p) => handles[p].as_ref().unwrap().child(),
                };
                handles.push(Some(scope));
                model.scopes.push(Some((parent, Vec::new(), Vec::new())));
            }
            // Register a tool globally or in a scope (names from a small set, so they
            // shadow each other).
            4..=6 => {
                const NAMES: [&str; 8] = ["t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"];
                let name_ref = NAMES[rand(NAMES.len())];
                let name = name_ref.to_string();
                let layer = if live_slots.is_empty() || rand(4) == 0 {
                    None
                } else {
                    Some(live_slots[rand(live_slots.len())])
                };
                let result = match layer {
                    None => registry.register(Probe::new(name_ref, &log)),
                    Some(s) => handles[s]
                        .as_ref()
                        .unwrap()
                        .register(Probe::new(name_ref, &log)),
                };
                let own = match layer {
                    None => &mut model.global,
                    Some(s) => &mut model.scopes[s].as_mut().unwrap().1,
                };
                match result {
                    Ok(reg) => {
                        assert!(!own.iter().any(|(_, n)| *n == name), "step {step}");
                        next_reg += 1;
                        own.push((next_reg, name));
                        regs.insert(next_reg, (layer, reg));
                    }
                    Err(_) => assert!(own.iter().any(|(_, n)| *n == name), "step {step}"),
                }
            }
            // Unregister something.
            7 if !regs.is_empty() => {
                let mut ids: Vec<u64> = regs.keys().copied().collect();
                ids.sort_unstable();
                let id = ids[rand(ids.len())];
                let (layer, reg) = regs.remove(&id).unwrap();
                reg.unregister();
                let own = match layer {
                    None => &mut model.global,
                    Some(s) => match model.scopes[s].as_mut() {
                        Some(state) => &mut state.1,
                        None => continue,
                    },
                };
                own.retain(|(r, _)| *r != id);
            }
            // Hide an inherited tool from a scope.
            8 if !live_slots.is_empty() => {
                let s = live_slots[rand(live_slots.len())];
                let parent = model.scopes[s].as_ref().unwrap().0;
                let inherited = model.view(parent);
                let own: Vec<String> = model.scopes[s]
                    .as_ref()
                    .unwrap()
                    .1
                    .iter()
                    .map(|(_, n)| n.clone())
                    .collect();
                let candidates: Vec<&String> =
                    inherited.iter().filter(|n| !own.contains(n)).collect();
                if let Some(name) = candidates.get(rand(candidates.len().max(1))) {
                    let name = (*name).clone();
                    handles[s]
                        .as_ref()
                        .unwrap()
                        .restrict(Restriction::deny([name.clone()]))
                        .unwrap_or_else(|e| panic!("step {step}: {e}"));
                    model.scopes[s].as_mut().unwrap().2.push(name);
                }
            }
            // Drop a scope handle that has no live children (a child keeps its parent).
            9 if !live_slots.is_empty() => {
                let s = live_slots[rand(live_slots.len())];
                let has_children = model.scopes.iter().flatten().any(|(p, ..)| *p == Some(s));
                if !has_children {
                    handles[s] = None;
                    model.scopes[s] = None;
                    regs.retain(|_, (layer, _)| *layer != Some(s));
                }
            }
            _ => {}
        }
        // Every live view (or one) matches the model.
        assert_eq!(names(&registry), model.view(None), "global, step {step}");
        let live_slots = live(&handles);
        let checked: Vec<usize> = if read_all || live_slots.is_empty() {
            live_slots
        } else {
            vec![live_slots[rand(live_slots.len())]]
        };
        for s in checked {
            assert_eq!(
                scope_names(handles[s].as_ref().unwrap()),
                model.view(Some(s)),
                "scope slot {s}, step {step}"
            );
        }
    }
    for s in live(&handles) {
        assert_eq!(
            scope_names(handles[s].as_ref().unwrap()),
            model.view(Some(s)),
            "scope slot {s}, at the end"
        );
    }
    assert!(
        handles.len() > 100,
        "only {} scopes were created",
        handles.len()
    );
}
