//! The `Mcp-Param-<name>` headers of a `tools/call` over Streamable HTTP (SEP-2243,
//! protocol revision 2026-07-28), checked against the arguments the client sent.
//!
//! A tool's input schema may mark a property with `"x-mcp-header": "<name>"` (see
//! `dsh_runtime::schema::Schema::header`, `#[schema(header = "..")]` on a `#[tool]`
//! parameter). A client then repeats that argument as the header `Mcp-Param-<name>`,
//! so proxies can route on it without reading the body; a server that reads the body
//! must refuse a request whose header and argument disagree, or the proxy and the tool
//! would act on different values.
//!
//! The HTTP step ([`ParamHeaders::take`]) takes every `Mcp-Param-*` header off a
//! `tools/call` of that revision (rmcp's own check would compare them with the `{}` it
//! parses in place of the arguments, see [`super::raw`]) and hands them to the handler,
//! which knows the tool: [`check`] runs before the call does. A refusal is answered with
//! HTTP `400` and JSON-RPC `-32020` (`HeaderMismatch`), naming the header and the argument.
//!
//! The rules, for each annotated property (reached from the root through `properties`):
//!
//! - the argument absent or `null`: no header is expected, and one sent is refused;
//! - the argument present: the header must be there, once;
//! - the header's value is visible ASCII, spaces and tabs only (surrounding spaces and
//!   tabs are not part of it); `=?base64?<text>?=` is Base64 (the standard alphabet, with
//!   its padding) of UTF-8 text, anything else the text itself;
//! - that text equals the argument: a string exactly, a boolean as `true`/`false`, a
//!   number numerically (`42.0` matches `42`).

use std::sync::Arc;

use dsh_runtime::json::{self, Value};

/// The prefix of a Base64-encoded header value (case-sensitive).
const BASE64_PREFIX: &str = "=?base64?";
/// The suffix of a Base64-encoded header value.
const BASE64_SUFFIX: &str = "?=";
/// The prefix of a parameter header's name (header names are case-insensitive).
#[cfg(feature = "http")]
const PARAM_PREFIX: &str = "mcp-param-";

/// The `Mcp-Param-*` headers of one `tools/call`, as sent: the name after the prefix
/// (lower case), and each value's bytes, in order (a repeated header stays repeated).
#[derive(Clone, Debug, Default)]
pub(crate) struct ParamHeaders(Arc<[(String, Vec<u8>)]>);

impl ParamHeaders {
    /// Take every `Mcp-Param-*` header out of `headers`.
    #[cfg(feature = "http")]
    pub(crate) fn take(headers: &mut axum::http::HeaderMap) -> ParamHeaders {
        let mut taken = Vec::new();
        let mut names = Vec::new();
        for (name, value) in headers.iter() {
            if let Some(suffix) = name.as_str().strip_prefix(PARAM_PREFIX) {
                taken.push((suffix.to_string(), value.as_bytes().to_vec()));
                if !names.contains(name) {
                    names.push(name.clone());
                }
            }
        }
        for name in names {
            headers.remove(name);
        }
        ParamHeaders(taken.into())
    }

    /// The values sent for `Mcp-Param-<name>`.
    fn values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.0
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_slice())
    }
}

/// One `x-mcp-header` annotation of an input schema.
struct Declared<'a> {
    /// The property names from the root to the annotated property.
    path: Vec<&'a str>,
    /// The header's name after `Mcp-Param-`.
    header: &'a str,
}

/// Every `x-mcp-header` of `schema` on a property reached from the root through
/// `properties` alone (where a client looks for them).
fn declared(schema: &serde_json::Map<String, serde_json::Value>) -> Vec<Declared<'_>> {
    fn walk<'a>(
        properties: Option<&'a serde_json::Value>,
        path: &mut Vec<&'a str>,
        out: &mut Vec<Declared<'a>>,
    ) {
        let Some(serde_json::Value::Object(properties)) = properties else {
            return;
        };
        // Schemas are at most `MAX_SCHEMA_DEPTH` deep; a deeper chain is no declaration.
        if path.len() >= dsh_runtime::schema::MAX_SCHEMA_DEPTH {
            return;
        }
        for (name, schema) in properties {
            path.push(name);
            if let Some(serde_json::Value::String(header)) = schema.get("x-mcp-header") {
                out.push(Declared {
                    path: path.clone(),
                    header,
                });
            }
            walk(schema.get("properties"), path, out);
            path.pop();
        }
    }
    let mut out = Vec::new();
    walk(schema.get("properties"), &mut Vec::new(), &mut out);
    out
}

/// Check the `Mcp-Param-*` headers `sent` against `arguments` (the arguments' text as the
/// client sent it) for a tool with input schema `schema`. The error says which header and
/// which argument disagree, and how.
pub(crate) fn check(
    schema: &serde_json::Map<String, serde_json::Value>,
    arguments: &str,
    sent: &ParamHeaders,
) -> Result<(), String> {
    let declared = declared(schema);
    if declared.is_empty() {
        return Ok(());
    }
    // Arguments that are not JSON never reach the tool (the pipeline refuses them), so
    // no header can disagree with what runs.
    let Ok(arguments) = json::parse(arguments) else {
        return Ok(());
    };
    for Declared { path, header } in declared {
        let argument = path.join(".");
        let full = format!("Mcp-Param-{header}");
        let value = path
            .iter()
            .try_fold(&arguments, |value, key| value.get(key))
            .filter(|v| !v.is_null());
        let mut values = sent.values(header);
        let (raw, again) = (values.next(), values.next());
        if again.is_some() {
            return Err(format!(
                "Header mismatch: {full} is sent more than once (argument `{argument}`)"
            ));
        }
        let (raw, value) = match (raw, value) {
            (None, None) => continue,
            (Some(_), None) => {
                return Err(format!(
                    "Header mismatch: {full} is sent, but argument `{argument}` is absent or null"
                ));
            }
            (None, Some(_)) => {
                return Err(format!(
                    "Header mismatch: {full} is missing: argument `{argument}` is present, and \
                     its value must be repeated in that header"
                ));
            }
            (Some(raw), Some(value)) => (raw, value),
        };
        let text = decode(raw).map_err(|why| {
            format!("Header mismatch: {full} (argument `{argument}`) is invalid: {why}")
        })?;
        if !matches(&text, value) {
            return Err(format!(
                "Header mismatch: {full} is {} but argument `{argument}` is {}",
                json_text(&text),
                value
            ));
        }
    }
    Ok(())
}

/// `text` as a JSON string, for a message.
fn json_text(text: &str) -> String {
    Value::from(text).to_string()
}

/// The text a header value stands for: its characters checked, surrounding spaces and
/// tabs dropped, and a `=?base64?…?=` value decoded.
fn decode(raw: &[u8]) -> Result<String, String> {
    if let Some(bad) = raw
        .iter()
        .find(|b| !(b.is_ascii_graphic() || **b == b' ' || **b == b'\t'))
    {
        return Err(format!(
            "it holds the byte 0x{bad:02x}; a header value is visible ASCII, spaces and \
             tabs (other text is sent as =?base64?…?=)"
        ));
    }
    // Only visible ASCII, spaces and tabs: valid UTF-8.
    let text = String::from_utf8_lossy(raw);
    let text = text.trim_matches([' ', '\t']);
    let Some(inner) = text
        .strip_prefix(BASE64_PREFIX)
        .and_then(|rest| rest.strip_suffix(BASE64_SUFFIX))
    else {
        return Ok(text.to_string());
    };
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(inner)
        .map_err(|e| format!("its =?base64?…?= value is not valid Base64: {e}"))?;
    String::from_utf8(bytes).map_err(|_| "its =?base64?…?= value is not UTF-8 text".to_string())
}

/// Whether the header's text stands for `value`: a string exactly, a boolean as
/// `true`/`false`, a number numerically (the text read as a JSON number).
fn matches(text: &str, value: &Value) -> bool {
    match value {
        Value::String(s) => s.as_str() == text,
        Value::Bool(b) => text == if *b { "true" } else { "false" },
        Value::Number(n) => {
            matches!(json::parse(text), Ok(Value::Number(h)) if h == *n)
        }
        // Only strings, integers and booleans are mirrored: no header matches anything
        // else.
        Value::Null | Value::Array(_) | Value::Object(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> serde_json::Map<String, serde_json::Value> {
        let value = serde_json::json!({
            "type": "object",
            "properties": {
                "region": { "type": "string", "x-mcp-header": "Region" },
                "count": { "type": "integer", "x-mcp-header": "Count" },
                "dry": { "type": "boolean", "x-mcp-header": "Dry" },
                "where": {
                    "type": "object",
                    "properties": { "zone": { "type": "string", "x-mcp-header": "Zone" } }
                },
                "query": { "type": "string" }
            }
        });
        match value {
            serde_json::Value::Object(o) => o,
            _ => unreachable!("an object literal"),
        }
    }

    fn sent(pairs: &[(&str, &[u8])]) -> ParamHeaders {
        ParamHeaders(
            pairs
                .iter()
                .map(|(n, v)| (n.to_ascii_lowercase(), v.to_vec()))
                .collect::<Vec<_>>()
                .into(),
        )
    }

    #[test]
    fn matching_headers_pass_and_absent_arguments_expect_none() {
        let args =
            r#"{"region":"us-west1","count":42,"dry":false,"where":{"zone":"b"},"query":"x"}"#;
        let headers = sent(&[
            ("region", b"us-west1"),
            ("COUNT", b" 42.0 "),
            ("dry", b"false"),
            ("zone", b"b"),
        ]);
        assert_eq!(check(&schema(), args, &headers), Ok(()));
        assert_eq!(check(&schema(), r#"{"region":null}"#, &sent(&[])), Ok(()));
    }

    #[test]
    fn base64_values_are_decoded_strictly() {
        let args = r#"{"region":"Hello, 世界"}"#;
        let ok = sent(&[("region", b"=?base64?SGVsbG8sIOS4lueVjA==?=")]);
        assert_eq!(check(&schema(), args, &ok), Ok(()));
        let hello = r#"{"region":"Hello"}"#;
        for bad in [&b"=?base64?SGVsbG8?="[..], b"=?base64?SGVs!!!bG8=?="] {
            let err = check(&schema(), hello, &sent(&[("region", bad)])).unwrap_err();
            assert!(err.contains("not valid Base64"), "{err}");
            assert!(
                err.contains("Mcp-Param-Region") && err.contains("`region`"),
                "{err}"
            );
        }
        // Without both markers the value is literal text.
        let literal = r#"{"region":"=?base64?SGVsbG8="}"#;
        let headers = sent(&[("region", b"=?base64?SGVsbG8=")]);
        assert_eq!(check(&schema(), literal, &headers), Ok(()));
    }

    #[test]
    fn refusals_name_the_header_and_the_argument() {
        let args = r#"{"region":"us-west1","count":7}"#;
        type Headers<'a> = &'a [(&'a str, &'a [u8])];
        let cases: [(Headers<'_>, &str); 6] = [
            (&[("count", b"7")], "Mcp-Param-Region is missing"),
            (
                &[("region", b"eu"), ("count", b"7")],
                "is \"eu\" but argument `region`",
            ),
            (
                &[("region", b"us-west1"), ("count", b"8")],
                "argument `count` is 7",
            ),
            (
                &[
                    ("region", b"us-west1"),
                    ("region", b"us-west1"),
                    ("count", b"7"),
                ],
                "more than once",
            ),
            (
                &[("region", b"us-we\xc3\xa9"), ("count", b"7")],
                "byte 0xc3",
            ),
            (
                &[("region", b"us-west1"), ("count", b"7"), ("dry", b"true")],
                "Mcp-Param-Dry is sent, but argument `dry` is absent",
            ),
        ];
        for (headers, expected) in cases {
            let err = check(&schema(), args, &sent(headers)).unwrap_err();
            assert!(err.contains(expected), "{err} lacks {expected}");
        }
    }

    #[test]
    fn booleans_and_nested_properties() {
        let args = r#"{"dry":true,"where":{"zone":"a"}}"#;
        let err = check(&schema(), args, &sent(&[("dry", b"True"), ("zone", b"a")])).unwrap_err();
        assert!(err.contains("Mcp-Param-Dry"), "{err}");
        let err = check(&schema(), args, &sent(&[("dry", b"true")])).unwrap_err();
        assert!(err.contains("`where.zone`"), "{err}");
    }
}
