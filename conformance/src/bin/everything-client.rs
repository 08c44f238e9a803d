//! The MCP conformance suite's client under test, written on dsh-mcp's public client
//! API: `conformance client --command 'everything-client' --scenario NAME` runs it with
//! the scenario's server URL as its last argument, `MCP_CONFORMANCE_SCENARIO` naming
//! the scenario and `MCP_CONFORMANCE_PROTOCOL_VERSION` the revision to speak.
//!
//! Every scenario runs the same way, as an application importing a server would: connect
//! with [`dsh_mcp::ClientBuilder`] (offering the revision asked, or the defaults),
//! import the server's tools with [`dsh_mcp::import_from`] and call each imported tool
//! once, its required arguments filled from its schema (defaults, the first enum
//! member, or a value of the type). The calls run with a caller that answers the
//! server's forms with the defaults their schemas give (SEP-1034), its sampling
//! requests with a fixed message and its roots requests with one root. A tool the import
//! leaves out (a schema outside the vocabulary) is reported, not called.
//!
//! Exit status: 0 when the connection and the listing worked (a tool's own error is
//! printed, not fatal), 1 otherwise.

use std::sync::Arc;

use dsh_mcp::rmcp::model::ProtocolVersion;
use dsh_mcp::{ClientBuilder, ImportOptions, import_from};
use dsh_runtime::caller::{
    AskingCall, CallerAnswer, CallerError, CallerFuture, CallerHandler, CallerRequest, FormAnswer,
    Root, SampledMessage, with_caller,
};
use dsh_runtime::json::Value;
use dsh_runtime::{Registry, ToolCall};
use serde_json::{Value as Json, json};

/// The scripted user: accepts forms with their defaults, answers sampling and roots.
struct User;

impl CallerHandler for User {
    fn request<'a>(
        &'a self,
        _call: AskingCall<'a>,
        request: CallerRequest,
    ) -> CallerFuture<'a, Result<CallerAnswer, CallerError>> {
        Box::pin(async move {
            Ok(match request {
                CallerRequest::Form(form) => {
                    CallerAnswer::Form(FormAnswer::Accepted(defaults(&form.requested_schema)))
                }
                CallerRequest::Sample(_) => CallerAnswer::Sample(SampledMessage::new(
                    dsh_runtime::content::ContentBlock::text("sampled by the conformance client"),
                    "conformance-model",
                )),
                CallerRequest::Roots => {
                    CallerAnswer::Roots(vec![Root::new("file:///conformance").with_name("root")])
                }
                _ => return Err(CallerError::Unsupported { capability: "url" }),
            })
        })
    }
}

/// A form's answer: each property with a `default`, at its default.
fn defaults(schema: &Value) -> Value {
    let schema = dsh_runtime::json::to_serde(schema);
    let mut out = serde_json::Map::new();
    if let Some(props) = schema.get("properties").and_then(Json::as_object) {
        for (name, prop) in props {
            if let Some(default) = prop.get("default") {
                out.insert(name.clone(), default.clone());
            }
        }
    }
    dsh_runtime::json::from_serde(&Json::Object(out)).unwrap_or(Value::Null)
}

/// A value of `prop`'s schema: its default, its first enum member, or one of its type.
fn sample(prop: &Json) -> Json {
    if let Some(default) = prop.get("default") {
        return default.clone();
    }
    if let Some(first) = prop
        .get("enum")
        .and_then(Json::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    match prop.get("type").and_then(Json::as_str) {
        Some("integer") => json!(1),
        Some("number") => json!(2.5),
        Some("boolean") => json!(true),
        Some("object") => arguments(prop),
        Some("array") => json!([]),
        _ => json!("conformance"),
    }
}

/// Arguments for a tool: every required property with a value of its schema.
fn arguments(schema: &Json) -> Json {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Json::as_array)
        .map(|r| r.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default();
    let mut out = serde_json::Map::new();
    if let Some(props) = schema.get("properties").and_then(Json::as_object) {
        for (name, prop) in props {
            if required.contains(&name.as_str()) {
                out.insert(name.clone(), sample(prop));
            }
        }
    }
    Json::Object(out)
}

/// The calls to make: those the scenario's context names (`toolCalls`), else one of
/// each imported tool with arguments from its published schema. The schema-echo
/// scenario's echo tool gets the other tool's schema as it was listed.
fn calls(imported: &[String], listed: &[dsh_mcp::rmcp::model::Tool]) -> Vec<(String, Json)> {
    let context: Json = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_default();
    if let Some(named) = context.get("toolCalls").and_then(Json::as_array) {
        return named
            .iter()
            .filter_map(|c| {
                let name = c.get("name")?.as_str()?.to_string();
                Some((name, c.get("arguments").cloned().unwrap_or(json!({}))))
            })
            .collect();
    }
    let schema_of = |name: &str| {
        listed
            .iter()
            .find(|t| t.name == name)
            .map(|t| Json::Object((*t.input_schema).clone()))
            .unwrap_or_default()
    };
    imported
        .iter()
        .map(|name| {
            let focal = listed.iter().find(|t| t.name != name.as_str());
            let args = match focal {
                Some(focal) if name == ECHO_TOOL => {
                    json!({ "schema": Json::Object((*focal.input_schema).clone()) })
                }
                _ => arguments(&schema_of(name)),
            };
            (name.clone(), args)
        })
        .collect()
}

/// The tool of `json-schema-2020-12-preservation` that takes back a schema as the
/// client received it.
const ECHO_TOOL: &str = "json_schema_echo";

/// The client: named after this package, offering the revision the suite asks for.
fn builder() -> ClientBuilder {
    let mut builder = ClientBuilder::new("dsh-conformance-client", env!("CARGO_PKG_VERSION"))
        .caller(Arc::new(User))
        .request_timeout(std::time::Duration::from_secs(60));
    if let Ok(version) = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION")
        && let Ok(version) =
            serde_json::from_value::<ProtocolVersion>(serde_json::Value::String(version))
    {
        builder = builder.revisions([version]);
    }
    builder
}

async fn run(url: &str) -> Result<(), String> {
    let client = builder()
        .connect_http(url)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let imported = import_from(&client, &ImportOptions::new())
        .await
        .map_err(|e| format!("tools/list: {e}"))?;
    for rejected in &imported.rejected {
        println!("not imported: {rejected}");
    }
    // The published schemas, for the arguments of each call.
    let listed = client
        .peer()
        .list_all_tools()
        .await
        .map_err(|e| format!("tools/list: {e}"))?;
    let registry = Registry::new();
    let mut names = Vec::new();
    for tool in imported.tools {
        names.push(tool.definition().name.to_string());
        if let Err(e) = registry.register_dyn(tool) {
            println!("not registered: {e}");
        }
    }
    for (i, (name, args)) in calls(&names, &listed).into_iter().enumerate() {
        let args = args.to_string();
        let call = ToolCall::new(format!("call-{i}"), name.as_str(), args.as_str());
        let result = with_caller(Arc::new(User), registry.execute(call)).await;
        println!("{name}({args}): {}", result.text());
    }
    let _ = client.cancel().await;
    Ok(())
}

#[tokio::main]
async fn main() {
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: everything-client URL (scenario {scenario:?})");
        std::process::exit(2);
    };
    if let Err(e) = run(&url).await {
        eprintln!("everything-client ({scenario}): {e}");
        std::process::exit(1);
    }
}
