//! `profile`: a driver for profilers, not a measurement.
//!
//! Runs one contender on one case in a loop so a profiler sees only that path:
//!
//! ```sh
//! cargo bench -p dsh-benches --bench profile --no-run   # prints the binary's path
//! valgrind --tool=callgrind target/release/deps/profile-<hash> B_valid ours_text 20000
//! ```
//!
//! Contenders: `ours_text`, `ours_value`, `floor_text`, `rmcp_router` (a clone of the parsed
//! map), `rmcp_router_text` (parsing the raw text first), `parse` (the snapshot alone),
//! `validate` (validating the snapshot against the tool's parameter schema),
//! `serde_value` (`serde_json::Value` from the text), and `mcp_ours` / `mcp_rmcp`: one
//! `tools/call` round trip through rmcp's client over a Unix socket pair to our
//! `McpServer` / to rmcp's `#[tool_router]` server (as the `mcp` bench, but on a
//! current-thread runtime, so client, server and transport run on this thread and the
//! count is repeatable; the kernel's share of the socket I/O is not counted). Without
//! arguments (as under `cargo bench`) it runs nothing.
//!
//! With `DSH_PROFILE_SUBSCRIBER=otel` the calls run under dsh-otel's layers (each span
//! built and sampled by an OpenTelemetry SDK tracer with no exporter): the cost of
//! tracing, against the same run without a subscriber.

mod common;

use std::hint::black_box;
use std::sync::Arc;

use common::{
    CASES, CallParts, RmcpServer, SearchArgs, registry, rmcp_context, rmcp_params, run_sync,
};
use dsh_runtime::ToolCall;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::JsonObject;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let [case, who, n] = args.as_slice() else {
        eprintln!("profile: usage: <case> <contender> <iterations>; nothing to do");
        return;
    };
    let case = CASES
        .iter()
        .find(|c| c.label == case)
        .unwrap_or_else(|| panic!("unknown case {case}"));
    let n: usize = n.parse().expect("iterations");
    let _traced =
        (std::env::var("DSH_PROFILE_SUBSCRIBER").as_deref() == Ok("otel")).then(install_otel);
    let (registry, _registrations) = registry();
    if let Some(contender) = who.strip_prefix("mcp_") {
        mcp_round_trips(registry, case, contender, n);
        return;
    }
    let parts = CallParts::new(case);
    let frozen = Arc::new(dsh_runtime::json::parse(case.text).expect("snapshot"));
    let server = RmcpServer::new();
    let (rmcp_cx, _keep) = rmcp_context(&server);
    let map: JsonObject = serde_json::from_str(case.text).expect("object");
    let schema = registry
        .view()
        .get(case.tool)
        .expect("the case's tool")
        .definition()
        .parameters
        .clone();
    for _ in 0..n {
        match who.as_str() {
            "ours_text" => {
                black_box(run_sync(registry.execute(parts.text_call())));
            }
            "ours_value" => {
                let call = ToolCall::new(parts.id.clone(), parts.name.clone(), frozen.clone());
                black_box(run_sync(registry.execute(call)));
            }
            "floor_text" => {
                if case.tool == "read_window" {
                    let a = serde_json::from_str::<common::ReadWindowArgs>(case.text).ok();
                    black_box(a.map(|a| run_sync(common::read_window(a.path, a.offset, a.limit))));
                } else {
                    let a = serde_json::from_str::<SearchArgs>(case.text).ok();
                    black_box(a.map(|a| run_sync(common::search(a))));
                }
            }
            "rmcp_router_text" => {
                let map: Option<JsonObject> = serde_json::from_str(black_box(case.text)).ok();
                if let Some(map) = map {
                    let _ = black_box(run_sync(server.tool_router.call(ToolCallContext::new(
                        &server,
                        rmcp_params(case.tool, map),
                        rmcp_cx.clone(),
                    ))));
                }
            }
            "validate" => {
                let _ = black_box(dsh_runtime::validate::validate_arguments(
                    &schema,
                    black_box(&frozen),
                ));
            }
            "parse" => {
                let _ = black_box(dsh_runtime::json::parse(black_box(case.text)));
            }
            "serde_value" => {
                let _ = black_box(serde_json::from_str::<serde_json::Value>(black_box(
                    case.text,
                )));
            }
            "rmcp_router" => {
                let _ = black_box(run_sync(server.tool_router.call(ToolCallContext::new(
                    &server,
                    rmcp_params(case.tool, map.clone()),
                    rmcp_cx.clone(),
                ))));
            }
            other => panic!("unknown contender {other}"),
        }
    }
}

/// dsh-otel's layers as the global subscriber, over SDK providers without exporters.
fn install_otel() -> (
    opentelemetry_sdk::trace::SdkTracerProvider,
    opentelemetry_sdk::metrics::SdkMeterProvider,
) {
    use tracing_subscriber::layer::SubscriberExt as _;
    let tracer = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
    let meter = opentelemetry_sdk::metrics::SdkMeterProvider::builder().build();
    let subscriber = tracing_subscriber::registry().with(dsh_otel::layers(&tracer, &meter));
    tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");
    (tracer, meter)
}

/// `n` sequential `tools/call`s of `case` through rmcp's client, to our server
/// (`contender` "ours") or rmcp's ("rmcp"), after one checked call.
fn mcp_round_trips(
    registry: dsh_runtime::Registry,
    case: &common::Case,
    contender: &str,
    n: usize,
) {
    use rmcp::ServiceExt as _;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let ours = dsh_mcp::McpServer::new(registry);
    let _in_runtime = rt.enter();
    let (server_end, client_end) = tokio::net::UnixStream::pair().expect("socket pair");
    let _server = match contender {
        "ours" => rt.spawn(async move {
            let _ = ours.serve(server_end).await;
        }),
        "rmcp" => rt.spawn(async move {
            if let Ok(running) = RmcpServer::new().serve(server_end).await {
                let _ = running.waiting().await;
            }
        }),
        other => panic!("unknown contender mcp_{other}"),
    };
    let client = rt.block_on(().serve(client_end)).expect("client handshake");
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str(case.text) else {
        panic!("inputs are objects");
    };
    let params = rmcp_params(case.tool, map);
    let check = rt.block_on(client.call_tool(params.clone())).expect("call");
    assert_ne!(check.is_error, Some(true), "{contender}: {check:?}");
    for _ in 0..n {
        black_box(rt.block_on(client.call_tool(params.clone())).expect("call"));
    }
}
