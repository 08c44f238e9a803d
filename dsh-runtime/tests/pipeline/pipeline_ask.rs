//! Approval declared on the tool (`#[tool(ask = "..")]`) and policy that targets a tool by
//! its type (`NamedTool`, `CallInfo::is`, `hooks::pre_execute_for`).

use std::sync::{Arc, Mutex};

use dsh_runtime::hooks::{Approval, PreDecision, approval_fn, pre_execute_fn, pre_execute_for};
use dsh_runtime::{NamedTool, Registry, Tool, ToolCall};

/// Close a ticket for good.
#[dsh_runtime::tool(ask = "closing a ticket cannot be undone", destructive)]
async fn close_ticket(id: u64) -> u64 {
    id
}

/// Look a ticket up.
#[dsh_runtime::tool(name = "show")]
async fn show_ticket(id: u64) -> u64 {
    id
}

/// What the approval handler was asked: the tool and the reason.
type Asked = (String, Option<String>);

fn close(id: u64) -> ToolCall {
    ToolCall::new("c", "close_ticket", format!(r#"{{"id":{id}}}"#))
}

#[test]
fn the_reason_is_on_the_definition_and_the_name_on_the_type() {
    assert_eq!(
        CloseTicket.definition().ask.as_deref(),
        Some("closing a ticket cannot be undone")
    );
    assert_eq!(ShowTicket.definition().ask, None);
    assert_eq!(CloseTicket::NAME, "close_ticket");
    assert_eq!(ShowTicket::NAME, "show");
    assert_eq!(ShowTicket::NAME, ShowTicket.definition().name);
}

#[tokio::test]
async fn a_declared_ask_goes_to_the_approval_handler_with_its_reason() {
    let registry = Registry::new();
    let _t = registry.register(CloseTicket).unwrap();
    let _s = registry.register(ShowTicket).unwrap();
    // No handler: denied, with the declared reason.
    let r = registry.execute(close(1)).await;
    assert_eq!(r.code_str(), Some("POLICY_DENIED"));
    assert_eq!(r.message(), Some("closing a ticket cannot be undone"));

    let asked: Arc<Mutex<Vec<Asked>>> = Arc::default();
    let log = asked.clone();
    let _h = registry.set_approval_handler(approval_fn(move |req| {
        log.lock()
            .unwrap()
            .push((req.call.name().to_string(), req.reason.map(str::to_string)));
        match req
            .call
            .arguments()
            .as_object()
            .and_then(|o| o.get("id")?.as_u64())
        {
            Some(1) => Approval::AllowedOnce,
            _ => Approval::Rejected,
        }
    }));
    let r = registry.execute(close(1)).await;
    assert_eq!(r.text(), "1");
    let r = registry.execute(close(2)).await;
    assert_eq!(r.code_str(), Some("APPROVAL_REJECTED"));
    // A tool without `ask` is not asked about.
    let r = registry
        .execute(ToolCall::new("c", "show", r#"{"id":3}"#))
        .await;
    assert_eq!(r.text(), "3");
    assert_eq!(
        *asked.lock().unwrap(),
        [
            (
                "close_ticket".to_string(),
                Some("closing a ticket cannot be undone".to_string())
            ),
            (
                "close_ticket".to_string(),
                Some("closing a ticket cannot be undone".to_string())
            ),
        ]
    );
}

#[tokio::test]
async fn policy_decides_first_and_defers_to_the_declared_ask() {
    let registry = Registry::new();
    let _t = registry.register(CloseTicket).unwrap();
    let _h = registry.set_approval_handler(approval_fn(|_| Approval::Rejected));
    // A hook that defers (`None`) leaves the declared ask in place.
    let _p = registry.add_pre_execute(pre_execute_fn(|_| None));
    assert_eq!(
        registry.execute(close(5)).await.code_str(),
        Some("APPROVAL_REJECTED")
    );
    // A hook for this tool, by type: an explicit allow skips the question, a deny stands.
    let _q = registry.add_pre_execute(pre_execute_for::<CloseTicket, _>(|call| {
        match call.arguments().as_object()?.get("id")?.as_u64()? {
            0 => Some(PreDecision::deny("ticket 0 is the template")),
            9 => Some(PreDecision::Allow),
            _ => None,
        }
    }));
    let r = registry.execute(close(0)).await;
    assert_eq!(r.code_str(), Some("POLICY_DENIED"));
    assert_eq!(r.message(), Some("ticket 0 is the template"));
    assert_eq!(registry.execute(close(9)).await.text(), "9");
    assert_eq!(
        registry.execute(close(4)).await.code_str(),
        Some("APPROVAL_REJECTED")
    );
}

#[tokio::test]
async fn a_typed_policy_follows_the_tool_name_and_ignores_other_tools() {
    let registry = Registry::new();
    let _t = registry.register(ShowTicket).unwrap();
    let _c = registry.register(CloseTicket).unwrap();
    let _h = registry.set_approval_handler(approval_fn(|_| Approval::AllowedOnce));
    // `ShowTicket` is called "show" (`name = ..`): the typed hook matches that name.
    let _p = registry.add_pre_execute(pre_execute_for::<ShowTicket, _>(|_| {
        Some(PreDecision::deny("no lookups today"))
    }));
    let _q = registry.add_pre_execute(pre_execute_fn(|call| {
        call.is::<CloseTicket>()
            .then(|| PreDecision::ask("asked by the typed policy"))
    }));
    let r = registry
        .execute(ToolCall::new("c", "show", r#"{"id":1}"#))
        .await;
    assert_eq!(r.message(), Some("no lookups today"));
    assert_eq!(registry.execute(close(2)).await.text(), "2");
}
