//! The protected-resource metadata of RFC 9728: the document, and where it is served.

use serde_json::{Value, json};

/// Where the metadata of the resource `audience` is, as a path (RFC 9728 §3.1: the
/// well-known prefix inserted before the resource's path), and as a URL.
///
/// # Errors
///
/// `audience` is not an absolute `http(s)` URL without a query or fragment.
pub(super) fn location(audience: &str) -> Result<(String, String), String> {
    let uri: axum::http::Uri = audience
        .parse()
        .map_err(|e| format!("the audience {audience:?} is not a URL: {e}"))?;
    let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
        return Err(format!(
            "the audience {audience:?} is not an absolute URL (scheme://host[:port]/path)"
        ));
    };
    if scheme != "http" && scheme != "https" {
        return Err(format!("the audience {audience:?} is not an http(s) URL"));
    }
    if uri.query().is_some() || audience.contains('#') {
        return Err(format!(
            "the audience {audience:?} has a query or fragment (RFC 8707 forbids them)"
        ));
    }
    let path = well_known(uri.path());
    Ok((path.clone(), format!("{scheme}://{authority}{path}")))
}

/// `/.well-known/oauth-protected-resource` followed by `resource_path` (without its
/// trailing slash; nothing for the root).
pub(super) fn well_known(resource_path: &str) -> String {
    let path = resource_path.trim_end_matches('/');
    format!("/.well-known/oauth-protected-resource{path}")
}

/// The metadata document.
pub(super) fn document(audience: &str, issuer: &str, scopes: &[String]) -> Value {
    let mut doc = json!({
        "resource": audience,
        "authorization_servers": [issuer],
        "bearer_methods_supported": ["header"],
    });
    if !scopes.is_empty()
        && let Some(map) = doc.as_object_mut()
    {
        map.insert("scopes_supported".to_string(), json!(scopes));
    }
    doc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_path_is_suffixed_with_the_resource_path() {
        assert_eq!(
            location("https://mcp.example/team/mcp").unwrap(),
            (
                "/.well-known/oauth-protected-resource/team/mcp".to_string(),
                "https://mcp.example/.well-known/oauth-protected-resource/team/mcp".to_string()
            )
        );
        assert_eq!(
            location("http://127.0.0.1:8080").unwrap().0,
            "/.well-known/oauth-protected-resource"
        );
        assert!(location("mcp.example/mcp").is_err());
        assert!(location("https://mcp.example/mcp?x=1").is_err());
        assert!(location("ftp://mcp.example/mcp").is_err());
        let doc = document("https://r", "https://as", &["a".to_string()]);
        assert_eq!(doc["authorization_servers"][0], "https://as");
        assert_eq!(doc["scopes_supported"][0], "a");
    }
}
