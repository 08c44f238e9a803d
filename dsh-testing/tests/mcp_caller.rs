//! `McpTestClient`'s scripted user answering what tools ask of their caller over MCP
//! (revision 2025-11-25: server-to-client requests): tools' own forms by tool and by
//! predicate, URL requests, sampling, roots, log notifications and their level, a
//! capability the user does not declare, and approval forms beside tools' own forms.

use std::time::Duration;

use dsh_mcp::McpServer;
use dsh_runtime::caller::{
    Elicited, FormAnswer, LogLevel, Root, SampleRequest, SampledMessage, UrlAnswer, UrlRequest,
};
use dsh_runtime::content::ContentBlock;
use dsh_runtime::{Registry, ToolContext, ToolError, ToolSchema, tool};
use dsh_testing::mcp::{ElicitationKind, McpAnswer, McpTestClient, UserCapabilities};
use serde::Deserialize;
use serde_json::json;

/// Where to deploy.
#[derive(ToolSchema, Deserialize)]
struct Target {
    /// The branch.
    branch: String,
    /// How many replicas.
    replicas: u32,
}

/// Log, ask a form, ask the model, list the roots.
#[tool]
async fn deploy(cx: ToolContext) -> Result<String, ToolError> {
    cx.log(LogLevel::Debug, "a detail");
    cx.log(LogLevel::Info, "asking");
    let target = match cx.elicit::<Target>("Where to?").await? {
        Elicited::Accepted(target) => target,
        Elicited::Declined => return Ok("declined".into()),
        Elicited::Cancelled => return Ok("cancelled".into()),
    };
    let note = cx
        .sample(SampleRequest::new(
            format!("note for {}", target.branch),
            20,
        ))
        .await?;
    let roots = cx.roots().await?;
    cx.log(LogLevel::Warning, "deployed");
    Ok(format!(
        "{} x{} ({}) in {}",
        target.branch,
        target.replicas,
        note.text(),
        roots.first().map_or("nowhere", |r| r.uri.as_str())
    ))
}

/// Send the user to sign in.
#[tool]
async fn sign_in(cx: ToolContext) -> Result<String, ToolError> {
    let answer = cx
        .elicit_url(UrlRequest::new(
            "Sign in",
            "https://example.com/login",
            "e-1",
        ))
        .await?;
    Ok(format!("{answer:?}"))
}

/// Asks approval first (`ask`), then a form of its own.
#[tool(ask = "it publishes")]
async fn publish(cx: ToolContext) -> Result<String, ToolError> {
    Ok(match cx.elicit::<Target>("Publish where?").await? {
        Elicited::Accepted(t) => format!("published {}", t.branch),
        _ => "not published".into(),
    })
}

fn server() -> (McpServer, Vec<dsh_runtime::RegistrationHandle>) {
    let registry = Registry::new();
    let regs = vec![
        registry.register(Deploy).expect("deploy"),
        registry.register(SignIn).expect("sign_in"),
        registry.register(Publish).expect("publish"),
    ];
    (McpServer::new(registry), regs)
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn model(text: &str) -> SampledMessage {
    SampledMessage::new(ContentBlock::text(text), "test-model")
}

/// Wait until the client holds `n` log messages (notifications are handled on tasks of
/// their own), at most a few seconds.
async fn logs_reach(client: &McpTestClient, n: usize) -> Vec<dsh_runtime::caller::LogMessage> {
    for _ in 0..100 {
        let logs = client.logs();
        if logs.len() >= n {
            return logs;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    client.logs()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_logs_asks_a_form_samples_and_lists_roots() {
    let (server, _regs) = server();
    let client = McpTestClient::connect_user(&server).await.expect("connect");
    client
        .answer_form("deploy", json!({"branch": "main", "replicas": 3}))
        .answer_sample_with(|request| model(&format!("{} tokens", request.max_tokens)))
        .set_roots(vec![Root::new("file:///srv/app").with_name("app")]);
    let result = client.call("deploy", json!({})).await.expect("call");
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert_eq!(text(&result), "main x3 (20 tokens) in file:///srv/app");

    let asked = client.elicitations();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].kind, ElicitationKind::Form);
    assert_eq!(asked[0].tool.as_deref(), Some("deploy"));
    assert_eq!(asked[0].message, "Where to?");
    assert_eq!(asked[0].form_fields(), ["branch", "replicas"]);
    assert_eq!(
        asked[0].content,
        Some(json!({"branch": "main", "replicas": 3}))
    );
    let sampled = client.sampling_requests();
    assert_eq!(sampled.len(), 1);
    assert_eq!(sampled[0]["maxTokens"], 20);
    assert_eq!(client.roots_requests(), 1);

    // `info` and above until the level is set. (rmcp's client handles each notification
    // on a task of its own: the order they are kept in is not the order sent.)
    let logs = logs_reach(&client, 2).await;
    let mut levels: Vec<LogLevel> = logs.iter().map(|l| l.level).collect();
    levels.sort();
    assert_eq!(levels, [LogLevel::Info, LogLevel::Warning]);

    client
        .set_log_level(LogLevel::Debug)
        .await
        .expect("setLevel");
    let again = client.call("deploy", json!({})).await.expect("call");
    assert_eq!(again.is_error, Some(false), "{}", text(&again));
    let logs = logs_reach(&client, 5).await;
    let mut levels: Vec<LogLevel> = logs[2..].iter().map(|l| l.level).collect();
    levels.sort();
    assert_eq!(levels, [LogLevel::Debug, LogLevel::Info, LogLevel::Warning]);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forms_by_predicate_once_declined_dismissed_and_answered_wrongly() {
    let (server, _regs) = server();
    let client = McpTestClient::connect_user(&server).await.expect("connect");
    client
        .answer_sample(model("n"))
        .answer_form_if(
            |e| e.message == "Where to?",
            json!({"branch": "dev", "replicas": 1}),
        )
        .answer_form_once("deploy", FormAnswer::Declined);
    let first = client.call("deploy", json!({})).await.expect("call");
    assert_eq!(text(&first), "declined");
    let second = client.call("deploy", json!({})).await.expect("call");
    assert_eq!(text(&second), "dev x1 (n) in nowhere");

    // Nothing answers: dismissed.
    let client = McpTestClient::connect_user(&server).await.expect("connect");
    assert_eq!(
        text(&client.call("deploy", json!({})).await.expect("call")),
        "cancelled"
    );
    assert_eq!(client.elicitations()[0].answer, McpAnswer::Cancel);

    // An answer of the wrong type is the body's error.
    client.answer_form("deploy", json!({"branch": "main", "replicas": "three"}));
    let result = client.call("deploy", json!({})).await.expect("call");
    assert_eq!(result.is_error, Some(true));
    let message = text(&result);
    assert!(message.contains("replicas"), "{message}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn url_requests_and_approval_forms_beside_tools_forms() {
    let (server, _regs) = server();
    let client = McpTestClient::connect_user(&server).await.expect("connect");
    assert_eq!(
        text(&client.call("sign_in", json!({})).await.expect("call")),
        "Cancelled"
    );
    client.answer_url("sign_in", UrlAnswer::Accepted);
    assert_eq!(
        text(&client.call("sign_in", json!({})).await.expect("call")),
        "Accepted"
    );
    let urls: Vec<_> = client
        .elicitations()
        .into_iter()
        .filter(|e| e.kind == ElicitationKind::Url)
        .collect();
    assert_eq!(urls.len(), 2);
    assert_eq!(urls[1].url(), Some("https://example.com/login"));

    // The approval form is answered by the approval script, the tool's own form by
    // its form script.
    client
        .approve("publish")
        .answer_form("publish", json!({"branch": "release", "replicas": 2}));
    let result = client.call("publish", json!({})).await.expect("call");
    assert_eq!(text(&result), "published release");
    let kinds: Vec<(ElicitationKind, McpAnswer)> = client
        .elicitations()
        .iter()
        .skip(2)
        .map(|e| (e.kind, e.answer))
        .collect();
    assert_eq!(
        kinds,
        [
            (ElicitationKind::Approval, McpAnswer::Approve),
            (ElicitationKind::Form, McpAnswer::Approve),
        ]
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_capability_the_user_does_not_declare_is_missing() {
    let (server, _regs) = server();
    let client = McpTestClient::connect_with(&server, UserCapabilities::all().sampling(false))
        .await
        .expect("connect");
    client.answer_form("deploy", json!({"branch": "main", "replicas": 3}));
    let result = client.call("deploy", json!({})).await.expect("call");
    assert_eq!(result.is_error, Some(true));
    let message = text(&result);
    assert!(message.contains("sampling"), "{message}");
    assert!(client.sampling_requests().is_empty());
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_2026_the_answers_come_in_input_required_rounds() {
    let (server, _regs) = server();
    let client = McpTestClient::connect_2026(&server, UserCapabilities::all())
        .await
        .expect("discover");
    client
        .answer_form("deploy", json!({"branch": "main", "replicas": 2}))
        .answer_sample_with(|request| model(&format!("{} tokens", request.max_tokens)))
        .set_roots(vec![Root::new("file:///srv/app")]);
    let result = client.call("deploy", json!({})).await.expect("call");
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert_eq!(text(&result), "main x2 (20 tokens) in file:///srv/app");
    // Each question was asked once, in its own round.
    assert_eq!(client.elicitations().len(), 1);
    assert_eq!(client.sampling_requests().len(), 1);
    assert_eq!(client.roots_requests(), 1);
    // Without a request log level, no log.
    assert!(client.logs().is_empty());
    client.close().await;
}
