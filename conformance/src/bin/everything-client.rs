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
//! The authorization scenarios (`auth/*`) connect the same way, with the OAuth client
//! of [`dsh_mcp::oauth_client`]: the authorization code grant, registering
//! dynamically (or with the Client ID Metadata Document URL the suite knows, where the
//! authorization server takes those), its user a [`Headless`] callback that fetches
//! the authorization URL and reads where the authorization server redirects; a
//! pre-registered client when the scenario's context (`MCP_CONFORMANCE_CONTEXT`) gives
//! a `client_id`; the client credentials grant (`client_secret_basic`/`_post`, or
//! `private_key_jwt` with the context's key) for the client credentials scenarios; the
//! JWT bearer grant with the context's workload JWT (`valid_jwt`); enterprise-managed
//! authorization with the context's identity provider and ID token.
//!
//! Exit status: 0 when the connection and the listing worked (a tool's own error is
//! printed, not fatal), 1 otherwise.

use std::sync::Arc;

use dsh_mcp::oauth_client::{
    AuthorizationCallback, AuthorizeFuture, EnterpriseIdp, OAuthConfig, Redirect,
};
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
    let context = context();
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

/// The scenario's context, as the suite passes it (`{}` when it passes none).
fn context() -> Json {
    std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_else(|| json!({}))
}

/// The Client ID Metadata Document URL the suite's authorization servers expect.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The redirect URI registered: nothing listens there, the redirect is read from the
/// authorization endpoint's answer.
const REDIRECT_URI: &str = "http://localhost:3000/callback";

/// The user of the authorization code grant: the suite's authorization endpoint
/// redirects at once, so a GET of the authorization URL (its redirect not followed)
/// answers with the redirect in `Location`.
struct Headless {
    http: reqwest::Client,
}

impl AuthorizationCallback for Headless {
    fn redirect_uri(&self) -> String {
        REDIRECT_URI.to_string()
    }

    fn authorize<'a>(&'a self, url: &'a str) -> AuthorizeFuture<'a> {
        Box::pin(async move {
            let response = self.http.get(url).send().await.map_err(|e| e.to_string())?;
            let location = response
                .headers()
                .get("location")
                .and_then(|l| l.to_str().ok())
                .ok_or_else(|| format!("no redirect from {url} (HTTP {})", response.status()))?;
            Ok(Redirect::Url(location.to_string()))
        })
    }
}

/// The OAuth client of an authorization scenario, from its context.
fn oauth(scenario: &str) -> Result<OAuthConfig, String> {
    let context = context();
    let field = |name: &str| context.get(name).and_then(Json::as_str).map(str::to_string);
    let client_id = field("client_id");
    if let Some(key) = field("private_key_pem") {
        let algorithm = field("signing_algorithm").unwrap_or_else(|| "ES256".to_string());
        let id = client_id.ok_or("the context has a private key but no client_id")?;
        return Ok(OAuthConfig::private_key_jwt(id, key, algorithm));
    }
    if let Some(assertion) = field("valid_jwt") {
        let id = client_id.ok_or("the context has a workload JWT but no client_id")?;
        return Ok(OAuthConfig::jwt_bearer(id, assertion));
    }
    if let Some(id_token) = field("idp_id_token") {
        let missing = |name: &str| format!("the context has an ID token but no {name}");
        let idp = EnterpriseIdp::new(
            field("idp_issuer").ok_or_else(|| missing("idp_issuer"))?,
            field("idp_token_endpoint").ok_or_else(|| missing("idp_token_endpoint"))?,
            field("idp_client_id").ok_or_else(|| missing("idp_client_id"))?,
            id_token,
        );
        let id = client_id.ok_or_else(|| missing("client_id"))?;
        let secret = field("client_secret").ok_or_else(|| missing("client_secret"))?;
        return Ok(OAuthConfig::enterprise_managed(idp, id, secret));
    }
    if scenario.starts_with("auth/client-credentials") {
        let id = client_id.ok_or("the context has no client_id")?;
        let secret = field("client_secret").ok_or("the context has no client_secret")?;
        return Ok(OAuthConfig::client_credentials(id, secret));
    }
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| e.to_string())?;
    let mut config = OAuthConfig::authorization_code(Headless { http })
        .client_name("dsh-conformance-client")
        .client_metadata_url(CLIENT_METADATA_URL);
    if let Some(id) = client_id {
        config = config.client_id(id);
    }
    if let Some(secret) = field("client_secret") {
        config = config.client_secret(secret);
    }
    Ok(config)
}

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

async fn run(url: &str, scenario: &str) -> Result<(), String> {
    let mut builder = builder();
    if scenario.starts_with("auth/") {
        builder = builder.oauth(oauth(scenario)?);
    }
    let client = builder
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
    if let Err(e) = run(&url, &scenario).await {
        eprintln!("everything-client ({scenario}): {e}");
        std::process::exit(1);
    }
}
