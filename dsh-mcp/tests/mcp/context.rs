//! Resources, prompts and completion served next to the tools (`McpServer::with_resources`,
//! `with_prompts`), over stdio and HTTP, on both revisions: lists, reads, a prompt's
//! messages, completion, the errors of unknown names and bad arguments, and updates of a
//! subscribed resource (2025-11-25: `resources/subscribe`; 2026-07-28: a listen stream's
//! `resourceSubscriptions`).

use dsh_mcp::McpServer;
use dsh_runtime::complete::Completer;
use dsh_runtime::content::{ContentBlock, ResourceContents};
use dsh_runtime::prompts::{Prompt, PromptArgument, PromptMessage, Prompts};
use dsh_runtime::resources::{Resource, Resources};
use serde_json::{Value, json};

use crate::common::cases;
use crate::common::rpc::Rpc;
use crate::common::tools::Toolset;
use crate::common::wire::{Revision, Served, Wire};

fn collections() -> (Resources, Prompts) {
    let resources = Resources::new();
    resources
        .register(
            Resource::fixed("notes://today", "today", |uri, _| async move {
                Ok(vec![
                    ResourceContents::text(uri, "buy milk").with_mime_type("text/plain"),
                ])
            })
            .with_mime_type("text/plain")
            .with_description("Today's note."),
        )
        .unwrap()
        .keep();
    resources
        .register(
            Resource::template("notes://{day}", "by-day", |uri, params| async move {
                let day: u32 = params.parse("day")?;
                Ok(vec![ResourceContents::text(
                    uri,
                    format!("note of day {day}"),
                )])
            })
            .unwrap()
            .with_completer("day", Completer::values(["1", "12", "2"])),
        )
        .unwrap()
        .keep();
    let prompts = Prompts::new();
    prompts
        .register(
            Prompt::new("review", |args| async move {
                let file = args.get("file").unwrap_or_default().to_string();
                Ok(vec![PromptMessage::user(ContentBlock::text(format!(
                    "Review {file}."
                )))])
            })
            .with_description("Review a file.")
            .with_argument(PromptArgument::required("file").with_description("The file."))
            .with_completer("file", Completer::values(["main.rs", "mod.rs", "lib.rs"])),
        )
        .unwrap()
        .keep();
    (resources, prompts)
}

fn params(revision: Revision, mut params: Value) -> Value {
    if revision == Revision::V2026_07_28 {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": revision.as_str(),
            "io.modelcontextprotocol/clientCapabilities": {},
        });
    }
    params
}

async fn connected(served: &Served, revision: Revision) -> Rpc {
    let mut rpc = served.rpc(Some(revision), None);
    if revision == Revision::V2025_11_25 {
        rpc.initialize(revision, json!({})).await;
    }
    rpc
}

cases! {
    resources_and_prompts_over_stdio_2025 => resources_and_prompts(Wire::Stdio, Revision::V2025_11_25);
    resources_and_prompts_over_http_2025 => resources_and_prompts(Wire::Http, Revision::V2025_11_25);
    resources_and_prompts_over_stdio_2026 => resources_and_prompts(Wire::Stdio, Revision::V2026_07_28);
    resources_and_prompts_over_http_2026 => resources_and_prompts(Wire::Http, Revision::V2026_07_28);
}

async fn resources_and_prompts(wire: Wire, revision: Revision) {
    let (resources, prompts) = collections();
    let tools = Toolset::new();
    let server: McpServer = tools
        .server()
        .with_resources(resources)
        .with_prompts(prompts);
    let served = Served::start(&server, wire).await;
    let mut rpc = connected(&served, revision).await;
    let at = format!("{wire:?}/{revision:?}");

    let list = rpc
        .request("resources/list", params(revision, json!({})))
        .await
        .unwrap();
    assert_eq!(list["resources"][0]["uri"], "notes://today", "{at}: {list}");
    assert_eq!(list["resources"][0]["mimeType"], "text/plain", "{at}");
    let templates = rpc
        .request("resources/templates/list", params(revision, json!({})))
        .await
        .unwrap();
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"], "notes://{day}",
        "{at}"
    );
    let read = rpc
        .request(
            "resources/read",
            params(revision, json!({"uri": "notes://today"})),
        )
        .await
        .unwrap();
    assert_eq!(read["contents"][0]["text"], "buy milk", "{at}: {read}");
    let templated = rpc
        .request(
            "resources/read",
            params(revision, json!({"uri": "notes://12"})),
        )
        .await
        .unwrap();
    assert_eq!(templated["contents"][0]["text"], "note of day 12", "{at}");
    // An unknown URI, a placeholder that does not parse: -32602 with the URI.
    for uri in ["nope://x", "notes://twelve"] {
        let error = rpc
            .request("resources/read", params(revision, json!({"uri": uri})))
            .await
            .unwrap_err();
        assert_eq!(error["code"], -32602, "{at}: {error}");
        assert_eq!(error["data"]["uri"], uri, "{at}: {error}");
    }

    let got = rpc
        .request(
            "prompts/get",
            params(
                revision,
                json!({"name": "review", "arguments": {"file": "a.rs"}}),
            ),
        )
        .await
        .unwrap();
    assert_eq!(
        got["messages"][0]["content"]["text"], "Review a.rs.",
        "{at}: {got}"
    );
    assert_eq!(got["messages"][0]["role"], "user", "{at}");
    let missing = rpc
        .request("prompts/get", params(revision, json!({"name": "review"})))
        .await
        .unwrap_err();
    assert_eq!(missing["code"], -32602, "{at}: {missing}");
    assert!(
        missing["message"].as_str().unwrap().contains("`file`"),
        "{at}: {missing}"
    );

    let completed = rpc
        .request(
            "completion/complete",
            params(
                revision,
                json!({"ref": {"type": "ref/prompt", "name": "review"}, "argument": {"name": "file", "value": "m"}}),
            ),
        )
        .await
        .unwrap();
    assert_eq!(
        completed["completion"]["values"],
        json!(["main.rs", "mod.rs"]),
        "{at}"
    );
    assert_eq!(completed["completion"]["total"], 2, "{at}");
    let placeholder = rpc
        .request(
            "completion/complete",
            params(
                revision,
                json!({"ref": {"type": "ref/resource", "uri": "notes://{day}"}, "argument": {"name": "day", "value": "1"}}),
            ),
        )
        .await
        .unwrap();
    assert_eq!(
        placeholder["completion"]["values"],
        json!(["1", "12"]),
        "{at}"
    );
    rpc.close().await;
    served.shutdown().await;
}

cases! {
    a_subscribed_resource_is_announced_on_2025 => a_subscribed_resource_is_announced(Revision::V2025_11_25);
    a_subscribed_resource_is_announced_on_2026 => a_subscribed_resource_is_announced(Revision::V2026_07_28);
}

async fn a_subscribed_resource_is_announced(revision: Revision) {
    let (resources, prompts) = collections();
    let tools = Toolset::new();
    let server = tools
        .server()
        .with_resources(resources.clone())
        .with_prompts(prompts);
    let served = Served::start(&server, Wire::Http).await;
    let mut rpc = connected(&served, revision).await;
    if revision == Revision::V2025_11_25 {
        let mut events = rpc.http_client().events().await;
        rpc.request(
            "resources/subscribe",
            params(revision, json!({"uri": "notes://today"})),
        )
        .await
        .unwrap();
        resources.notify_updated("notes://other");
        resources.notify_updated("notes://today");
        let updated = tokio::time::timeout(crate::common::PATIENCE, async {
            loop {
                let event = events.recv().await.expect("the session's stream");
                if event["method"] == "notifications/resources/updated" {
                    return event;
                }
            }
        })
        .await
        .expect("an update");
        assert_eq!(updated["params"]["uri"], "notes://today", "{updated}");
    } else {
        rpc.send(&json!({
            "jsonrpc": "2.0", "id": 3, "method": "subscriptions/listen",
            "params": params(revision, json!({"notifications": {"resourceSubscriptions": ["notes://today", "nope://x"]}})),
        }))
        .await;
        let ack = rpc
            .next("the acknowledgment", |v| {
                v["method"] == "notifications/subscriptions/acknowledged"
            })
            .await;
        assert_eq!(
            ack["params"]["notifications"]["resourceSubscriptions"],
            json!(["notes://today"]),
            "{ack}"
        );
        resources.notify_updated("notes://today");
        let updated = rpc
            .next("the update", |v| {
                v["method"] == "notifications/resources/updated"
            })
            .await;
        assert_eq!(updated["params"]["uri"], "notes://today", "{updated}");
    }
    rpc.close().await;
    served.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_announced_on_one_instance_reaches_subscribers_of_the_others() {
    use dsh_mcp::store::RedisStore;
    use dsh_mcp::store::conformance::TestRedis;
    use std::sync::Arc;

    let redis = TestRedis::shared();
    let prefix = TestRedis::prefix("resource-updates");
    let keys = dsh_mcp::StateKeys::random().unwrap();
    let mut instances = Vec::new();
    for _ in 0..3 {
        let (resources, prompts) = collections();
        let store = RedisStore::connect(redis.url(), &prefix).await.unwrap();
        let server = Toolset::new()
            .server()
            .with_resources(resources.clone())
            .with_prompts(prompts)
            .with_store(Arc::new(store))
            .with_state_keys(keys.clone());
        instances.push((Served::start(&server, Wire::Http).await, resources));
    }
    // A 2025-11-25 session on instance 1, a 2026-07-28 listen stream on instance 2.
    let mut session = connected(&instances[1].0, Revision::V2025_11_25).await;
    let mut events = session.http_client().events().await;
    session
        .request(
            "resources/subscribe",
            params(Revision::V2025_11_25, json!({"uri": "notes://today"})),
        )
        .await
        .unwrap();
    let mut listener = connected(&instances[2].0, Revision::V2026_07_28).await;
    listener
        .send(&json!({
            "jsonrpc": "2.0", "id": 3, "method": "subscriptions/listen",
            "params": params(Revision::V2026_07_28, json!({"notifications": {"resourceSubscriptions": ["notes://today"]}})),
        }))
        .await;
    listener
        .next("the acknowledgment", |v| {
            v["method"] == "notifications/subscriptions/acknowledged"
        })
        .await;
    // Announced on instance 0 (once the relays are up: the subscriptions started them).
    let announced = async {
        let updated = tokio::time::timeout(crate::common::PATIENCE, async {
            loop {
                let event = events.recv().await.expect("the session's stream");
                if event["method"] == "notifications/resources/updated" {
                    return event;
                }
            }
        });
        let announce = async {
            for _ in 0..100 {
                instances[0].1.notify_updated("notes://today");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        };
        tokio::select! {
            updated = updated => updated.expect("an update on instance 1"),
            () = announce => panic!("no update reached instance 1"),
        }
    };
    let updated = announced.await;
    assert_eq!(updated["params"]["uri"], "notes://today", "{updated}");
    let heard = listener
        .next("the update on instance 2", |v| {
            v["method"] == "notifications/resources/updated"
        })
        .await;
    assert_eq!(heard["params"]["uri"], "notes://today", "{heard}");
    session.close().await;
    listener.close().await;
    for (served, _) in instances {
        served.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_and_reads_carry_the_servers_cache_hints() {
    let (resources, prompts) = collections();
    let server = Toolset::new()
        .server()
        .with_resources(resources)
        .with_prompts(prompts)
        .with_cache_hints(
            std::time::Duration::from_secs(60),
            rmcp::model::CacheScope::Public,
        );
    let served = Served::start(&server, Wire::Http).await;
    let revision = Revision::V2026_07_28;
    let mut rpc = connected(&served, revision).await;
    for (method, extra) in [
        ("tools/list", json!({})),
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("prompts/list", json!({})),
        ("resources/read", json!({"uri": "notes://today"})),
    ] {
        let result = rpc.request(method, params(revision, extra)).await.unwrap();
        assert_eq!(result["ttlMs"], 60_000, "{method}: {result}");
        assert_eq!(result["cacheScope"], "public", "{method}: {result}");
    }
    rpc.close().await;
    served.shutdown().await;
}
