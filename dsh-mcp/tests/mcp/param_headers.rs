//! `Mcp-Param-*` headers (SEP-2243, revision 2026-07-28): a `#[tool]` parameter marked
//! `#[schema(header = "..")]` is published with `x-mcp-header`, and a `tools/call` over
//! Streamable HTTP whose header disagrees with the argument (missing, different, bad
//! Base64, characters a header value cannot hold) is refused with HTTP 400 and JSON-RPC
//! `-32020` before the tool runs.

use std::sync::atomic::{AtomicUsize, Ordering};

use dsh_mcp::{HttpOptions, serve_http};
use dsh_runtime::tool;
use serde_json::{Value, json};

use crate::common::http::HttpClient;
use crate::common::tools::Toolset;
use crate::common::wire::Revision;

/// How many times [`deploy`] ran.
static RUNS: AtomicUsize = AtomicUsize::new(0);

/// Deploy to a region.
#[tool]
async fn deploy(
    /// Where to deploy.
    #[schema(header = "Region")]
    region: String,
    /// How many copies.
    #[schema(header = "Replicas")]
    replicas: Option<u32>,
    /// What to deploy (not mirrored).
    image: String,
) -> String {
    RUNS.fetch_add(1, Ordering::SeqCst);
    format!("{image} x{} in {region}", replicas.unwrap_or(1))
}

/// A `tools/call` of `deploy` on 2026-07-28, with the request `_meta` it needs.
fn call(id: u64, arguments: Value) -> String {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": {
            "name": "deploy",
            "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": Revision::V2026_07_28.as_str(),
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "header-test", "version": "0"},
            },
        },
    })
    .to_string()
}

#[tokio::test]
async fn param_headers_are_checked_against_the_arguments() {
    let tools = Toolset::new().with(Deploy);
    let http = serve_http(&tools.server(), HttpOptions::default())
        .await
        .unwrap();
    let client = HttpClient::new(http.url()).revision(Revision::V2026_07_28);

    // tools/list publishes the annotation.
    let list = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/list",
        "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": Revision::V2026_07_28.as_str(),
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "header-test", "version": "0"},
        }},
    });
    let reply = client.post(&list.to_string()).await;
    let schema = &reply.response()["result"]["tools"][0]["inputSchema"];
    assert_eq!(schema["properties"]["region"]["x-mcp-header"], "Region");
    assert_eq!(schema["properties"]["replicas"]["x-mcp-header"], "Replicas");
    assert!(schema["properties"]["image"].get("x-mcp-header").is_none());

    let args = json!({"region": "us-west1", "replicas": 3, "image": "app:1"});
    // Matching headers (names in any case, the number numerically): the call runs.
    let before = RUNS.load(Ordering::SeqCst);
    let reply = client
        .post_with(
            &call(2, args.clone()),
            &[
                ("mcp-param-region", "us-west1"),
                ("MCP-PARAM-REPLICAS", "3.0"),
            ],
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let result = &reply.response()["result"];
    assert_eq!(
        result["structuredContent"]["result"],
        "app:1 x3 in us-west1"
    );
    assert_eq!(RUNS.load(Ordering::SeqCst), before + 1);

    // A non-ASCII argument, its header Base64-encoded; an absent argument, no header.
    let reply = client
        .post_with(
            &call(3, json!({"region": "Zürich, 世界", "image": "app:1"})),
            &[("Mcp-Param-Region", "=?base64?WsO8cmljaCwg5LiW55WM?=")],
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        reply.response()["result"]["structuredContent"]["result"],
        "app:1 x1 in Zürich, 世界"
    );
    assert_eq!(RUNS.load(Ordering::SeqCst), before + 2);

    // Each refusal: 400, -32020 naming the header and the argument, and no run.
    let refused: [(&[(&str, &str)], &str); 5] = [
        (
            &[("Mcp-Param-Replicas", "3")],
            "Mcp-Param-Region is missing: argument `region`",
        ),
        (
            &[
                ("Mcp-Param-Region", "eu-west1"),
                ("Mcp-Param-Replicas", "3"),
            ],
            "Mcp-Param-Region is \"eu-west1\" but argument `region` is \"us-west1\"",
        ),
        (
            &[
                ("Mcp-Param-Region", "us-west1"),
                ("Mcp-Param-Replicas", "4"),
            ],
            "Mcp-Param-Replicas is \"4\" but argument `replicas` is 3",
        ),
        (
            // "us-west1" without its padding.
            &[
                ("Mcp-Param-Region", "=?base64?dXMtd2VzdDE?="),
                ("Mcp-Param-Replicas", "3"),
            ],
            "Mcp-Param-Region (argument `region`) is invalid: its =?base64?…?= value is not valid Base64",
        ),
        (
            &[
                ("Mcp-Param-Region", "=?base64?dXMt!!!d2VzdDE=?="),
                ("Mcp-Param-Replicas", "3"),
            ],
            "is not valid Base64",
        ),
    ];
    for (i, (headers, expected)) in refused.into_iter().enumerate() {
        let id = 10 + i as u64;
        let reply = client.post_with(&call(id, args.clone()), headers).await;
        assert_eq!(reply.status, 400, "{headers:?}: {}", reply.body);
        let error = &reply.response()["error"];
        assert_eq!(error["code"], -32020, "{headers:?}: {}", reply.body);
        let message = error["message"].as_str().unwrap_or_default();
        assert!(message.contains(expected), "{message} lacks {expected}");
        assert_eq!(reply.response()["id"], id);
    }
    assert_eq!(
        RUNS.load(Ordering::SeqCst),
        before + 2,
        "no refused call ran"
    );

    // A value with bytes outside visible ASCII, sent raw (reqwest refuses to send it).
    let body = call(20, json!({"region": "zürich", "image": "app:1"}));
    let length = format!("content-length: {}", body.len());
    let head = crate::common::http::head(
        "application/json",
        &[
            "mcp-protocol-version: 2026-07-28",
            "mcp-method: tools/call",
            "mcp-name: deploy",
            "mcp-param-region: zürich",
            &length,
            "connection: close",
        ],
    );
    let (status, answer) =
        crate::common::http::exchange(http.local_addr(), &head, body.as_bytes()).await;
    assert_eq!(status, 400, "{answer}");
    assert!(answer.contains("-32020"), "{answer}");
    assert!(
        answer.contains("Mcp-Param-Region (argument `region`) is invalid"),
        "{answer}"
    );
    assert_eq!(
        RUNS.load(Ordering::SeqCst),
        before + 2,
        "no refused call ran"
    );

    http.shutdown().await.unwrap();
}
