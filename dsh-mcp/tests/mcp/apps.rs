//! MCP Apps (`io.modelcontextprotocol/ui`): a client that declares the extension gets the
//! card view on tools with presenters, the view as a `ui://` resource and each result's
//! cards in `_meta`; a client that does not sees nothing new.

use dsh_mcp::McpServer;
use dsh_runtime::cards::{CallView, ResultSummary, ResultView, TerminalExit};
use dsh_runtime::{Registry, tool};
use serde_json::{Value, json};

use crate::common::rpc::{Rpc, tools_call};
use crate::common::wire::Revision;

const VIEW: &str = "ui://dsh-rs/cards";

fn run_card(args: &RunArgs) -> CallView {
    CallView::terminal(&args.command)
}

fn run_result(_args: &RunArgs, result: &ResultSummary) -> Option<ResultView> {
    let text = result.content.first()?.as_text()?.to_string();
    Some(ResultView::terminal(text, Some(TerminalExit::Code(7))))
}

/// Pretend to run a command.
#[tool(present_call = run_card, present_result = run_result)]
async fn run(
    /// The command.
    command: String,
) -> String {
    format!("ran {command}")
}

/// Say hello (no presenters).
#[tool]
async fn hello() -> String {
    "hello".into()
}

fn server() -> McpServer {
    let registry = Registry::new();
    registry.register(Run).expect("run registers");
    registry.register(Hello).expect("hello registers");
    McpServer::new(registry)
}

fn ui_capabilities() -> Value {
    json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}})
}

fn tool<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["name"] == name))
        .unwrap_or_else(|| panic!("no tool {name} in {list}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_with_the_ui_extension_gets_the_view_and_the_cards() {
    let mut client = Rpc::stream(&server());
    let init = client
        .initialize(Revision::V2025_11_25, ui_capabilities())
        .await;
    let capabilities = &init["capabilities"];
    assert!(
        capabilities["extensions"]["io.modelcontextprotocol/ui"].is_object(),
        "{init}"
    );
    assert!(capabilities["resources"].is_object(), "{init}");

    let list = client
        .request("tools/list", json!({}))
        .await
        .expect("tools/list");
    assert_eq!(tool(&list, "run")["_meta"]["ui"]["resourceUri"], VIEW);
    assert!(tool(&list, "hello").get("_meta").is_none(), "{list}");

    let read = client
        .request("resources/read", json!({"uri": VIEW}))
        .await
        .expect("the view reads");
    let contents = &read["contents"][0];
    assert_eq!(contents["uri"], VIEW);
    assert_eq!(contents["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(contents["_meta"]["ui"]["csp"], json!({}));
    let html = contents["text"].as_str().expect("the view's HTML");
    assert!(html.contains("window.DshCards"));
    assert!(html.contains("default-src 'none'"));

    let answer = client
        .call(tools_call(5, "run", json!({"command": "make test"})))
        .await;
    let result = &answer["result"];
    assert_eq!(
        result["structuredContent"],
        json!({"result": "ran make test"}),
        "{answer}"
    );
    assert_eq!(
        result["_meta"]["dev.dsh-rs/cards"],
        json!({
            "callCard": {"card": "terminal", "title": "make test"},
            "resultCard": {"card": "terminal", "output": "ran make test", "exitCode": 7},
        })
    );
    // The model sees only the content, unchanged.
    assert_eq!(
        result["content"],
        json!([{"type": "text", "text": "ran make test"}])
    );

    let answer = client.call(tools_call(6, "hello", json!({}))).await;
    assert!(answer["result"].get("_meta").is_none(), "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_it_sees_nothing_new() {
    for capabilities in [
        json!({}),
        json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/uri-list"]}}}),
    ] {
        let mut client = Rpc::stream(&server());
        let init = client
            .initialize(Revision::V2025_11_25, capabilities.clone())
            .await;
        let server_caps = &init["capabilities"];
        assert!(server_caps["tools"].is_object(), "{init}");
        assert!(server_caps.get("resources").is_none(), "{init}");
        assert!(
            server_caps["extensions"]
                .get("io.modelcontextprotocol/ui")
                .is_none(),
            "{init}"
        );
        let list = client
            .request("tools/list", json!({}))
            .await
            .expect("tools/list");
        assert!(tool(&list, "run").get("_meta").is_none(), "{list}");
        assert!(
            client
                .request("resources/read", json!({"uri": VIEW}))
                .await
                .is_err()
        );
        let answer = client
            .call(tools_call(5, "run", json!({"command": "make"})))
            .await;
        assert!(answer["result"].get("_meta").is_none(), "{answer}");
    }
}
