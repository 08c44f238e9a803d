//! The answers of the OAuth layer: `401` with a `WWW-Authenticate: Bearer` challenge
//! (RFC 6750 §3, with RFC 9728's `resource_metadata`), `403` for a scope the token
//! lacks.

use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::wire::{Answer, Header, Refusal};

/// A parameter value as an RFC 7230 quoted string: the characters a quoted string
/// cannot hold as they are (`"`, `\`, controls) left out.
fn quoted(text: &str) -> String {
    let inner: String = text
        .chars()
        .filter(|c| *c != '"' && *c != '\\' && !c.is_control())
        .collect();
    format!("\"{inner}\"")
}

/// The challenge and its JSON body.
fn challenge(
    status: u16,
    metadata_url: &str,
    error: Option<(&str, &str)>,
    scope: Option<&str>,
) -> Response {
    let mut value = format!("Bearer resource_metadata={}", quoted(metadata_url));
    if let Some((code, description)) = error {
        value.push_str(&format!(
            ", error={}, error_description={}",
            quoted(code),
            quoted(description)
        ));
    }
    if let Some(scope) = scope {
        value.push_str(&format!(", scope={}", quoted(scope)));
    }
    let body = match error {
        Some((code, description)) => {
            json!({ "error": code, "error_description": description })
        }
        None => json!({
            "error": "unauthorized",
            "error_description": "an access token is required (Authorization: Bearer)",
        }),
    };
    let body = serde_json::to_vec(&body).unwrap_or_default();
    // Only a metadata URL with bytes a header cannot hold: the bare challenge.
    let value = match HeaderValue::from_str(&value) {
        Ok(_) => value,
        Err(_) => "Bearer".to_string(),
    };
    Refusal::new(status, Answer::Json(body))
        .with_header(Header::WwwAuthenticate, value)
        .into_response()
}

/// `401` for a request without a token (no error code, RFC 6750 §3.1).
pub(super) fn missing(metadata_url: &str) -> Response {
    challenge(401, metadata_url, None, None)
}

/// `401` for a token that is not valid here, saying why.
pub(super) fn invalid_token(metadata_url: &str, why: &str) -> Response {
    challenge(401, metadata_url, Some(("invalid_token", why)), None)
}

/// `400` for an `Authorization` header that is no bearer token.
pub(super) fn invalid_request(metadata_url: &str, why: &str) -> Response {
    challenge(400, metadata_url, Some(("invalid_request", why)), None)
}

/// `403` for a call of `tool`, which needs `scope`, with a token that lacks it.
pub(super) fn insufficient_scope(metadata_url: &str, tool: &str, scope: &str) -> Response {
    let why = format!("tool `{tool}` needs the scope {scope}");
    challenge(
        403,
        metadata_url,
        Some(("insufficient_scope", &why)),
        Some(scope),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::{StatusCode, header};

    fn www(response: &Response) -> &str {
        response.headers()[header::WWW_AUTHENTICATE]
            .to_str()
            .unwrap()
    }

    #[test]
    fn challenges_name_the_metadata_and_the_error() {
        let m = "https://r/.well-known/oauth-protected-resource/mcp";
        let r = missing(m);
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(www(&r), format!("Bearer resource_metadata=\"{m}\""));
        let r = invalid_token(m, "the \"token\" has expired");
        assert_eq!(
            www(&r),
            format!(
                "Bearer resource_metadata=\"{m}\", error=\"invalid_token\", \
                 error_description=\"the token has expired\""
            )
        );
        let r = insufficient_scope(m, "bash", "tools:exec");
        assert_eq!(r.status(), StatusCode::FORBIDDEN);
        assert!(
            www(&r).ends_with(", scope=\"tools:exec\"")
                && www(&r).contains("error=\"insufficient_scope\""),
            "{}",
            www(&r)
        );
    }
}
