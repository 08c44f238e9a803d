//! `TestClient`: one call, a batch, a typed call, an agent scope, scripted approvals.

use dsh_runtime::hooks::{Approval, PreDecision, pre_execute_fn};
use dsh_runtime::{Registry, Restriction, tool};
use dsh_testing::TestClient;

/// Add two numbers.
#[tool(read_only, concurrency_safe)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Remove a file (pretend).
#[tool(destructive)]
async fn remove(path: String) -> String {
    format!("removed {path}")
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn registry() -> (Registry, Vec<dsh_runtime::RegistrationHandle>) {
    let registry = Registry::new();
    let regs = vec![
        registry.register(Add).expect("add"),
        registry.register(Remove).expect("remove"),
    ];
    (registry, regs)
}

#[test]
fn one_call_a_batch_and_a_typed_call() {
    rt().block_on(async {
        let (registry, _regs) = registry();
        let client = TestClient::new(&registry);
        assert_eq!(client.call("add", r#"{"a":2,"b":3}"#).await.text(), "5");
        let bad = client.call("add", r#"{"a":"2"}"#).await;
        assert_eq!(bad.code_str(), Some("INVALID_ARGS"));
        assert_eq!(
            bad.message(),
            Some(r#"invalid arguments: missing required property "b"; "a" must be an integer"#)
        );
        let texts: Vec<String> = client
            .batch(
                &[
                    ("add", r#"{"a":1,"b":1}"#),
                    ("nope", "{}"),
                    ("add", r#"{"a":2,"b":2}"#),
                ],
                4,
            )
            .await
            .iter()
            .map(|r| r.text())
            .collect();
        assert_eq!(texts[0], "2");
        assert!(
            texts[1].starts_with("Error: unknown tool \"nope\""),
            "{}",
            texts[1]
        );
        assert_eq!(texts[2], "4");
        assert_eq!(
            client.call_typed::<Add>(AddArgs { a: 40, b: 2 }).await,
            Ok(42)
        );
    });
}

#[test]
fn calls_come_from_the_agent_scope() {
    rt().block_on(async {
        let (registry, _regs) = registry();
        let scope = registry.scope();
        scope
            .restrict(Restriction::deny(["remove"]))
            .expect("restrict");
        let agent = TestClient::in_scope(scope.clone());
        assert_eq!(agent.scope().map(|s| s.id()), Some(scope.id()));
        let hidden = agent.call("remove", r#"{"path":"x"}"#).await;
        assert_eq!(hidden.code_str(), Some("UNKNOWN_TOOL"), "{}", hidden.text());
        assert_eq!(agent.call("add", r#"{"a":1,"b":2}"#).await.text(), "3");
        // The global view still has it.
        let global = TestClient::new(&registry);
        assert_eq!(
            global.call("remove", r#"{"path":"x"}"#).await.text(),
            "removed x"
        );
    });
}

#[test]
fn approvals_are_answered_from_the_script() {
    rt().block_on(async {
        let (registry, _regs) = registry();
        let _ask = registry.add_pre_execute(pre_execute_fn(|call| {
            (call.name() == "remove").then(|| PreDecision::ask("removing files"))
        }));
        let client = TestClient::new(&registry);
        // Nothing scripted yet: no handler, so the ask is a denial.
        let unscripted = client.call("remove", r#"{"path":"a"}"#).await;
        assert_eq!(unscripted.code_str(), Some("POLICY_DENIED"));
        client
            .answer_once("remove", Approval::AllowedOnce)
            .reject("remove");
        let first = client.call("remove", r#"{"path":"a"}"#).await;
        assert_eq!(first.text(), "removed a");
        let second = client.call("remove", r#"{"path":"b"}"#).await;
        assert_eq!(second.code_str(), Some("APPROVAL_REJECTED"));
        assert_eq!(second.message(), Some(r#"the user rejected tool "remove""#));
        client.approve("remove");
        assert_eq!(
            client.call("remove", r#"{"path":"c"}"#).await.text(),
            "removed c"
        );
        // `add` is never asked about.
        assert_eq!(client.call("add", r#"{"a":1,"b":1}"#).await.text(), "2");
        assert_eq!(client.approvals_asked(), ["remove", "remove", "remove"]);
    });
}
