//! What a resource's read function may return, and how it becomes contents.

use std::borrow::Cow;

use serde::Serialize;

use super::ResourceError;
use crate::content::ResourceContents;

/// A value a resource read returns, turned into the contents of the URI read: text,
/// bytes (sent as base64), a value as JSON, or contents as they are.
///
/// `#[resource]` functions return one of these (or a `Result` of one). Implement it for
/// a type of your own to return that type directly.
///
/// | type | contents |
/// | --- | --- |
/// | `String`, `&'static str`, `Cow<'static, str>` | one text |
/// | `Vec<u8>`, `&'static [u8]`, `Box<[u8]>` | one blob (base64) |
/// | [`Json<T>`] (`T: Serialize`) | one text, the value as JSON, MIME type `application/json` unless the resource sets one |
/// | [`ResourceContents`], `Vec<ResourceContents>` | as they are |
///
/// The resource's MIME type (`#[resource(mime_type = "..")]`) is given to the text or
/// blob made here; contents returned as they are keep their own.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a resource's contents",
    label = "not the contents of a resource",
    note = "return `String` or `&'static str` (text), `Vec<u8>` (bytes, sent as base64), `dsh_runtime::resources::Json<T>` (a value as JSON text), `ResourceContents` or `Vec<ResourceContents>` (as they are), or a `Result` of one of these; or implement `dsh_runtime::resources::IntoContents` for the type"
)]
pub trait IntoContents {
    /// The MIME type of these contents when the resource sets none (`application/json`
    /// for [`Json`]).
    const MIME_TYPE: Option<&'static str> = None;

    /// The contents of `uri`, of MIME type `mime_type` when known.
    ///
    /// # Errors
    ///
    /// The value cannot be turned into contents (a [`Json`] value that does not
    /// serialize): [`ResourceError::Failed`].
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ResourceError>;
}

fn typed(contents: ResourceContents, mime_type: Option<&str>) -> Vec<ResourceContents> {
    vec![match mime_type {
        Some(m) => contents.with_mime_type(m),
        None => contents,
    }]
}

impl IntoContents for String {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        Ok(typed(ResourceContents::text(uri, self), mime_type))
    }
}

impl IntoContents for &'static str {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        Ok(typed(ResourceContents::text(uri, self), mime_type))
    }
}

impl IntoContents for Cow<'static, str> {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        Ok(typed(ResourceContents::text(uri, self), mime_type))
    }
}

impl IntoContents for Vec<u8> {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        Ok(typed(ResourceContents::blob(uri, base64(&self)), mime_type))
    }
}

impl IntoContents for &'static [u8] {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        Ok(typed(ResourceContents::blob(uri, base64(self)), mime_type))
    }
}

impl IntoContents for Box<[u8]> {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        Ok(typed(ResourceContents::blob(uri, base64(&self)), mime_type))
    }
}

impl IntoContents for ResourceContents {
    fn into_contents(
        self,
        _uri: &str,
        _mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        Ok(vec![self])
    }
}

impl IntoContents for Vec<ResourceContents> {
    fn into_contents(
        self,
        _uri: &str,
        _mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        Ok(self)
    }
}

/// A value read as JSON: a resource returning `Json<T>` gives one text, the value
/// serialized, of MIME type `application/json` unless the resource sets another.
///
/// ```
/// use dsh_runtime::content::ResourceContents;
/// use dsh_runtime::resources::{IntoContents, Json};
///
/// #[derive(serde::Serialize)]
/// struct Config {
///     retries: u8,
/// }
///
/// let contents = Json(Config { retries: 3 })
///     .into_contents("config://app", <Json<Config> as IntoContents>::MIME_TYPE)
///     .unwrap();
/// assert_eq!(
///     contents,
///     [ResourceContents::text("config://app", r#"{"retries":3}"#).with_mime_type("application/json")]
/// );
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

impl<T: Serialize> IntoContents for Json<T> {
    const MIME_TYPE: Option<&'static str> = Some("application/json");

    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        let text = serde_json::to_string(&self.0).map_err(|e| {
            ResourceError::Failed(format!("resource {uri}: the value does not serialize: {e}"))
        })?;
        Ok(typed(
            ResourceContents::text(uri, text),
            mime_type.or(Self::MIME_TYPE),
        ))
    }
}

/// `bytes` in standard base64, padded (what a blob holds).
pub(crate) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        for (input, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(input.as_bytes()), encoded, "{input:?}");
        }
        assert_eq!(base64(&[0xff, 0xfe, 0xfd]), "//79");
    }

    #[test]
    fn values_become_contents() {
        let text = "hi".into_contents("a://b", Some("text/plain")).unwrap();
        assert_eq!(
            text,
            [ResourceContents::text("a://b", "hi").with_mime_type("text/plain")]
        );
        let blob = vec![1u8, 2, 3].into_contents("a://b", None).unwrap();
        assert_eq!(blob, [ResourceContents::blob("a://b", "AQID")]);
        let json = Json([1, 2]).into_contents("a://b", None).unwrap();
        assert_eq!(
            json,
            [ResourceContents::text("a://b", "[1,2]").with_mime_type("application/json")]
        );
        let kept = ResourceContents::text("x://y", "z")
            .into_contents("a://b", Some("text/plain"))
            .unwrap();
        assert_eq!(kept, [ResourceContents::text("x://y", "z")]);
    }
}
