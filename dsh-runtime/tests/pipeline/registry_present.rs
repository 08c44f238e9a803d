//! `Registry::present_call` / `present_result`: the tool the caller's scope sees, its
//! soft-validated presenters, the generic fallback for everything else, and replay from a
//! persisted result summary (never the value).

use std::sync::Arc;

use dsh_runtime::cards::{
    CallView, FileLocation, ReadLine, ReadView, ResultSummary, ResultView, ToolCallKind,
};
use dsh_runtime::json::{self, Value};
use dsh_runtime::schema::{Property, Schema};
use dsh_runtime::{
    Registry, Restriction, Tool, ToolContext, ToolDefinition, ToolError, ToolSchema,
    content::ContentBlock, tool,
};
use serde::{Deserialize, Serialize};

fn v(text: &str) -> Value {
    json::parse(text).expect("test JSON")
}

/// The window a `peek` call returned.
#[derive(Serialize, Deserialize, ToolSchema)]
struct Window {
    path: String,
    first: u64,
    lines: Vec<String>,
}

fn peek_call_card(args: &PeekArgs) -> Option<CallView> {
    let PeekArgs { path, first } = args;
    if path == "decline" {
        return None;
    }
    Some(CallView::Generic {
        title: format!("Peek {path}"),
        kind: Some(ToolCallKind::Read),
        raw_input: None,
        content: None,
        locations: Some(vec![FileLocation::new(path).at_line(first.unwrap_or(1))]),
    })
}

fn peek_meta(_args: &PeekArgs, out: &Window) -> ReadView {
    let lines = (out.first..)
        .zip(&out.lines)
        .map(|(n, t)| ReadLine::new(n, t.as_str()))
        .collect();
    ReadView::new(&out.path, out.first, lines, 100)
}

fn peek_result(_args: &PeekArgs, result: &ResultSummary) -> Option<ResultView> {
    let meta = result.meta.as_ref()?;
    json::from_value::<ReadView>(meta)
        .ok()
        .map(ResultView::from)
}

/// Show two lines of a (pretend) file.
#[tool(
    present_call = peek_call_card,
    present_result = peek_result,
    presentation_meta = peek_meta
)]
async fn peek(path: String, first: Option<u64>) -> Window {
    let first = first.unwrap_or(1);
    Window {
        lines: vec![format!("line {first}"), format!("line {}", first + 1)],
        path,
        first,
    }
}

/// A tool with no presenters at all.
#[tool]
async fn plain(text: String) -> String {
    text
}

/// A hand-written tool whose presenters panic, and whose definition accepts any object,
/// so the panic is reached (the registry's validity check passes).
struct Exploding {
    def: ToolDefinition,
}

impl Exploding {
    fn new(name: &'static str) -> Exploding {
        Exploding {
            def: ToolDefinition::new(
                name,
                "Panics when presented.",
                Arc::new(Schema::object(
                    vec![Property::new("x", Schema::integer(), false)],
                    dsh_runtime::schema::Additional::Open,
                )),
                Arc::new(Schema::null()),
            ),
        }
    }
}

impl Tool for Exploding {
    type Args = Value;
    type Output = ();

    fn definition(&self) -> &ToolDefinition {
        &self.def
    }

    async fn call(&self, _args: Value, _cx: ToolContext) -> Result<(), ToolError> {
        Ok(())
    }

    fn present_call(&self, _args: &Value) -> Option<CallView> {
        panic!("call presenter exploded")
    }

    fn present_result(&self, _args: &Value, _result: &ResultSummary) -> Option<ResultView> {
        panic!("result presenter exploded")
    }
}

/// A hand-written tool that presents whatever it is given, without validating: the
/// registry's own check must keep stale arguments away from it.
struct Trusting {
    def: ToolDefinition,
}

impl Tool for Trusting {
    type Args = Value;
    type Output = ();

    fn definition(&self) -> &ToolDefinition {
        &self.def
    }

    async fn call(&self, _args: Value, _cx: ToolContext) -> Result<(), ToolError> {
        Ok(())
    }

    fn present_call(&self, args: &Value) -> Option<CallView> {
        Some(CallView::terminal(args.to_string()))
    }
}

fn summary(text: &str) -> ResultSummary {
    ResultSummary {
        content: vec![ContentBlock::text(text)],
        is_error: false,
        meta: None,
    }
}

#[test]
fn call_card_from_the_presenter() {
    let registry = Registry::new();
    let _peek = registry.register(Peek).unwrap();
    let card = registry.present_call("peek", &v(r#"{"path":"a.txt","first":7}"#));
    assert_eq!(
        serde_json::to_string(&card).unwrap(),
        r#"{"card":"generic","title":"Peek a.txt","kind":"read","locations":[{"path":"a.txt","line":7}]}"#
    );
    // Lenient forms the validator accepts reach the presenter normalized.
    let card = registry.present_call("peek", &v(r#"{"path":"a.txt","first":null}"#));
    assert!(
        matches!(&card, CallView::Generic { title, .. } if title == "Peek a.txt"),
        "{card:?}"
    );
}

#[test]
fn stale_arguments_give_the_generic_cards() {
    let registry = Registry::new();
    let _peek = registry.register(Peek).unwrap();
    // An older version of the tool called the parameter `file`.
    let stale = v(r#"{"file":"a.txt","first":2}"#);
    assert_eq!(
        registry.present_call("peek", &stale),
        CallView::generic("peek", Some(stale.clone()))
    );
    let s = ResultSummary {
        meta: Some(v(
            r#"{"path":"a.txt","offset":2,"lines":[],"totalLines":100}"#,
        )),
        ..summary("two lines")
    };
    assert_eq!(
        registry.present_result("peek", &stale, &s),
        ResultView::generic(&s)
    );
    // Wrong types are stale too.
    let wrong = v(r#"{"path":7}"#);
    assert_eq!(
        registry.present_call("peek", &wrong),
        CallView::generic("peek", Some(wrong.clone()))
    );
}

#[test]
fn an_argument_that_no_longer_exists_still_renders_the_card() {
    // A call logged when `peek` had an `encoding` parameter: the open root ignores the
    // key, as a live call would, and the presenter gets the rest.
    let registry = Registry::new();
    let _peek = registry.register(Peek).unwrap();
    let old = v(r#"{"path":"a.txt","first":3,"encoding":"utf8"}"#);
    let card = registry.present_call("peek", &old);
    assert!(
        matches!(&card, CallView::Generic { title, locations: Some(l), .. }
            if title == "Peek a.txt" && l[0].line == Some(3)),
        "{card:?}"
    );
}

#[test]
fn registry_checks_arguments_even_for_presenters_that_do_not() {
    let registry = Registry::new();
    let def = ToolDefinition::new(
        "trusting",
        "Presents anything.",
        Arc::new(Schema::closed_object(vec![Property::new(
            "cmd",
            Schema::string(),
            true,
        )])),
        Arc::new(Schema::null()),
    );
    let _t = registry.register(Trusting { def }).unwrap();
    let good = v(r#"{"cmd":"ls"}"#);
    assert_eq!(
        registry.present_call("trusting", &good),
        CallView::terminal(r#"{"cmd":"ls"}"#)
    );
    let stale = v(r#"{"command":"ls"}"#);
    assert_eq!(
        registry.present_call("trusting", &stale),
        CallView::generic("trusting", Some(stale.clone()))
    );
}

#[test]
fn unknown_tool_and_missing_or_declining_presenters_fall_back() {
    let registry = Registry::new();
    let _peek = registry.register(Peek).unwrap();
    let _plain = registry.register(Plain).unwrap();
    let args = v(r#"{"text":"hi"}"#);
    let s = summary("hi");

    assert_eq!(
        registry.present_call("gone", &args),
        CallView::generic("gone", Some(args.clone()))
    );
    assert_eq!(
        registry.present_result("gone", &args, &s),
        ResultView::generic(&s)
    );
    assert_eq!(
        registry.present_call("plain", &args),
        CallView::generic("plain", Some(args.clone()))
    );
    assert_eq!(
        registry.present_result("plain", &args, &s),
        ResultView::generic(&s)
    );
    // `peek` declines for this path, and has no meta to build a result card from.
    let decline = v(r#"{"path":"decline"}"#);
    assert_eq!(
        registry.present_call("peek", &decline),
        CallView::generic("peek", Some(decline.clone()))
    );
    assert_eq!(
        registry.present_result("peek", &decline, &s),
        ResultView::generic(&s)
    );
}

#[test]
fn panicking_presenters_are_contained() {
    let registry = Registry::new();
    let _boom = registry.register(Exploding::new("boom")).unwrap();
    let args = v(r#"{"x":1}"#);
    let s = summary("done");
    assert_eq!(
        registry.present_call("boom", &args),
        CallView::generic("boom", Some(args.clone()))
    );
    assert_eq!(
        registry.present_result("boom", &args, &s),
        ResultView::generic(&s)
    );
}

#[test]
fn cards_come_from_the_tool_the_scope_sees() {
    let registry = Registry::new();
    let _global = registry.register(Plain).unwrap();
    let agent = registry.scope();
    // The agent's own `plain` shadows the global one and panics when presented; the
    // global view keeps the quiet one.
    let _shadow = agent.register(Exploding::new("plain")).unwrap();
    let _peek = agent.register(Peek).unwrap();
    let args = v(r#"{"path":"a.txt"}"#);

    assert!(matches!(
        agent.present_call("peek", &args),
        CallView::Generic { title, .. } if title == "Peek a.txt"
    ));
    // `peek` lives only in the scope: the global view falls back.
    assert_eq!(
        registry.present_call("peek", &args),
        CallView::generic("peek", Some(args.clone()))
    );

    // A child that hides `peek` sees no presenter for it.
    let child = agent.child();
    child.restrict(Restriction::deny(["peek"])).unwrap();
    assert_eq!(
        child.present_call("peek", &args),
        CallView::generic("peek", Some(args.clone()))
    );
    assert!(matches!(
        agent.present_call("peek", &args),
        CallView::Generic { title, .. } if title == "Peek a.txt"
    ));
}

#[tokio::test]
async fn replay_uses_the_persisted_summary_not_the_value() {
    let registry = Registry::new();
    let _peek = registry.register(Peek).unwrap();
    let args = r#"{"path":"notes.md","first":3}"#;
    let result = registry
        .execute(dsh_runtime::ToolCall::new("c1", "peek", args))
        .await;
    assert!(result.is_success(), "{result:?}");
    let live = registry.present_result("peek", &v(args), &result.summary());
    let expected: ResultView = ReadView::new(
        "notes.md",
        3,
        vec![ReadLine::new(3, "line 3"), ReadLine::new(4, "line 4")],
        100,
    )
    .into();
    assert_eq!(live, expected);

    // What a log keeps: the summary, with meta and without the value.
    let persisted = serde_json::to_string(&result.summary()).unwrap();
    assert!(persisted.contains(r#""meta":{"path":"notes.md","offset":3"#));
    assert!(!persisted.contains(r#""value""#), "{persisted}");
    assert!(!persisted.contains(r#""first""#), "{persisted}");
    let back: ResultSummary = serde_json::from_str(&persisted).unwrap();
    assert_eq!(registry.present_result("peek", &v(args), &back), expected);
}

#[tokio::test]
async fn nested_calls_carry_no_meta_so_their_cards_are_generic() {
    let registry = Registry::new();
    let _peek = registry.register(Peek).unwrap();
    let args = r#"{"path":"notes.md"}"#;
    let outer = registry
        .execute(dsh_runtime::ToolCall::new("outer", "peek", args))
        .await;
    assert!(outer.meta().is_some());
    let nested = registry
        .execute(
            dsh_runtime::ToolCall::new("inner", "peek", args)
                .with_parent(dsh_runtime::ExecutionId::mint()),
        )
        .await;
    assert!(nested.is_success());
    assert_eq!(nested.meta(), None);
    let s = nested.summary();
    assert_eq!(
        registry.present_result("peek", &v(args), &s),
        ResultView::generic(&s)
    );
}
