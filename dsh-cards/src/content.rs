//! The content blocks a model is shown: MCP's `ContentBlock` union (protocol revisions
//! 2025-11-25 and 2026-07-28, which agree on it), as serde types.
//!
//! | block | JSON `type` | carries |
//! | --- | --- | --- |
//! | [`ContentBlock::Text`] | `text` | `text` |
//! | [`ContentBlock::Image`] | `image` | base64 `data`, `mimeType` |
//! | [`ContentBlock::Audio`] | `audio` | base64 `data`, `mimeType` |
//! | [`ContentBlock::Resource`] | `resource` | an embedded `resource`: `uri`, optional `mimeType`, `text` or base64 `blob` |
//! | [`ContentBlock::ResourceLink`] | `resource_link` | `uri`, `name`, optional `title`, `description`, `mimeType`, `size` |
//!
//! Every block may carry [`Annotations`] (`audience`, `priority`, `lastModified`), hints
//! for the client showing it. The JSON is MCP's wire shape field for field; reading is
//! lenient like the cards' (unknown fields such as `_meta` or a link's `icons` are
//! ignored, and `media_type` is read as an older spelling of an image's `mimeType`).
//!
//! The constructors take what they are given: [`ContentBlock::validate`] checks what
//! they cannot (base64 that decodes, a MIME type of the form `type/subtype`, a URI with a
//! scheme, a priority in `0..=1`, an RFC 3339 `lastModified`) and says what is wrong.
//!
//! ```
//! use dsh_cards::{Annotations, ContentBlock, ResourceLink, Role};
//!
//! let clip = ContentBlock::audio("UklGRiQAAABXQVZF", "audio/wav")
//!     .with_annotations(Annotations::new().with_audience([Role::User]).with_priority(0.25));
//! assert_eq!(
//!     serde_json::to_string(&clip).unwrap(),
//!     r#"{"type":"audio","data":"UklGRiQAAABXQVZF","mimeType":"audio/wav","annotations":{"audience":["user"],"priority":0.25}}"#
//! );
//! assert!(clip.validate().is_ok());
//!
//! let file = ContentBlock::resource_text("file:///notes/todo.md", "- ship it")
//!     .with_mime_type("text/markdown");
//! let link = ContentBlock::from(ResourceLink::new("file:///notes/big.csv", "big.csv").with_size(48_000));
//! assert_eq!(
//!     serde_json::to_string(&link).unwrap(),
//!     r#"{"type":"resource_link","uri":"file:///notes/big.csv","name":"big.csv","size":48000}"#
//! );
//!
//! let bad = ContentBlock::image("not base64!", "image/png");
//! assert_eq!(
//!     bad.validate().unwrap_err().to_string(),
//!     "image `data` is not base64: unexpected ' ' at offset 3"
//! );
//! # let _ = file;
//! ```

use std::fmt;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A model-facing content block (MCP's `ContentBlock`).
///
/// Match with `..` in each variant: a later MCP revision may add fields (as
/// `annotations` was added here).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text.
        text: String,
        /// Hints for the client.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
    /// An image, base64-encoded.
    Image {
        /// Base64 data.
        data: String,
        /// The MIME type, e.g. `image/png` (`mimeType` on the wire).
        #[serde(rename = "mimeType", alias = "media_type")]
        media_type: String,
        /// Hints for the client.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
    /// Audio, base64-encoded.
    Audio {
        /// Base64 data.
        data: String,
        /// The MIME type, e.g. `audio/wav` (`mimeType` on the wire).
        #[serde(rename = "mimeType")]
        media_type: String,
        /// Hints for the client.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
    /// A resource's contents, embedded (MCP's `EmbeddedResource`).
    Resource {
        /// The contents: a URI with its text or its base64 bytes.
        resource: ResourceContents,
        /// Hints for the client.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
    /// A resource the client can read or fetch, named but not embedded.
    ResourceLink(ResourceLink),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text {
            text: text.into(),
            annotations: None,
        }
    }

    /// An image block: base64 `data` of MIME type `mime_type` (e.g. `image/png`).
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Image {
            data: data.into(),
            media_type: mime_type.into(),
            annotations: None,
        }
    }

    /// An audio block: base64 `data` of MIME type `mime_type` (e.g. `audio/wav`).
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Audio {
            data: data.into(),
            media_type: mime_type.into(),
            annotations: None,
        }
    }

    /// An embedded text resource, without a MIME type (see
    /// [`with_mime_type`](Self::with_mime_type)).
    pub fn resource_text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        ContentBlock::from(ResourceContents::text(uri, text))
    }

    /// An embedded binary resource: base64 `blob` of MIME type `mime_type`.
    pub fn resource_blob(
        uri: impl Into<String>,
        blob: impl Into<String>,
        mime_type: impl Into<String>,
    ) -> Self {
        ContentBlock::from(ResourceContents::blob(uri, blob).with_mime_type(mime_type))
    }

    /// A link to a resource (see [`ResourceLink`] for the optional fields).
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ContentBlock::ResourceLink(ResourceLink::new(uri, name))
    }

    /// The block with these annotations (replacing any it had).
    pub fn with_annotations(mut self, annotations: Annotations) -> Self {
        if let Some(slot) = self.annotations_slot() {
            *slot = Some(annotations);
        }
        self
    }

    /// The block with this MIME type: an image's, audio's, embedded resource's or
    /// link's. A text block has none and is returned unchanged.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        match &mut self {
            ContentBlock::Image { media_type, .. } | ContentBlock::Audio { media_type, .. } => {
                *media_type = mime_type.into();
            }
            ContentBlock::Resource { resource, .. } => {
                *resource.media_type_mut() = Some(mime_type.into());
            }
            ContentBlock::ResourceLink(link) => link.media_type = Some(mime_type.into()),
            ContentBlock::Text { .. } => {}
        }
        self
    }

    /// The wire `type` of the block: `text`, `image`, `audio`, `resource` or
    /// `resource_link`.
    pub fn kind(&self) -> &'static str {
        match self {
            ContentBlock::Text { .. } => "text",
            ContentBlock::Image { .. } => "image",
            ContentBlock::Audio { .. } => "audio",
            ContentBlock::Resource { .. } => "resource",
            ContentBlock::ResourceLink(_) => "resource_link",
        }
    }

    /// The text, for a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text { text, .. } => Some(text),
            _ => None,
        }
    }

    /// The MIME type, where the block has one.
    pub fn media_type(&self) -> Option<&str> {
        match self {
            ContentBlock::Image { media_type, .. } | ContentBlock::Audio { media_type, .. } => {
                Some(media_type)
            }
            ContentBlock::Resource { resource, .. } => resource.media_type(),
            ContentBlock::ResourceLink(link) => link.media_type.as_deref(),
            ContentBlock::Text { .. } => None,
        }
    }

    /// The block's annotations, if it has any.
    pub fn annotations(&self) -> Option<&Annotations> {
        match self {
            ContentBlock::Text { annotations, .. }
            | ContentBlock::Image { annotations, .. }
            | ContentBlock::Audio { annotations, .. }
            | ContentBlock::Resource { annotations, .. } => annotations.as_ref(),
            ContentBlock::ResourceLink(link) => link.annotations.as_ref(),
        }
    }

    fn annotations_slot(&mut self) -> Option<&mut Option<Annotations>> {
        match self {
            ContentBlock::Text { annotations, .. }
            | ContentBlock::Image { annotations, .. }
            | ContentBlock::Audio { annotations, .. }
            | ContentBlock::Resource { annotations, .. } => Some(annotations),
            ContentBlock::ResourceLink(link) => Some(&mut link.annotations),
        }
    }

    /// Checks what the constructors cannot: base64 `data`/`blob` that decodes (the
    /// standard alphabet, padding optional), MIME types of the form `type/subtype`
    /// (parameters allowed), URIs with a scheme, and the annotations (see
    /// [`Annotations::validate`]). The first problem found is returned.
    pub fn validate(&self) -> Result<(), ContentError> {
        let kind = self.kind();
        match self {
            ContentBlock::Text { .. } => {}
            ContentBlock::Image {
                data, media_type, ..
            }
            | ContentBlock::Audio {
                data, media_type, ..
            } => {
                check_base64(kind, "data", data)?;
                check_media_type(kind, media_type)?;
            }
            ContentBlock::Resource { resource, .. } => {
                check_uri(kind, resource.uri())?;
                if let Some(media_type) = resource.media_type() {
                    check_media_type(kind, media_type)?;
                }
                if let ResourceContents::Blob { blob, .. } = resource {
                    check_base64(kind, "blob", blob)?;
                }
            }
            ContentBlock::ResourceLink(link) => {
                check_uri(kind, &link.uri)?;
                if let Some(media_type) = &link.media_type {
                    check_media_type(kind, media_type)?;
                }
            }
        }
        match self.annotations() {
            Some(annotations) => annotations.check(kind),
            None => Ok(()),
        }
    }
}

impl From<ResourceContents> for ContentBlock {
    /// The contents embedded as a `resource` block.
    fn from(resource: ResourceContents) -> Self {
        ContentBlock::Resource {
            resource,
            annotations: None,
        }
    }
}

impl From<ResourceLink> for ContentBlock {
    /// The link as a `resource_link` block.
    fn from(link: ResourceLink) -> Self {
        ContentBlock::ResourceLink(link)
    }
}

/// Who a block is meant for (MCP's `Role`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Role {
    /// The person using the client.
    User,
    /// The model.
    Assistant,
}

/// Hints for the client showing a block (MCP's `Annotations`). All optional; absent
/// fields are left out of the JSON.
///
/// ```
/// use dsh_cards::{Annotations, Role};
///
/// let hints = Annotations {
///     audience: Some(vec![Role::Assistant]),
///     ..Annotations::default()
/// };
/// assert_eq!(hints, Annotations::new().with_audience([Role::Assistant]));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// Who the block is for: the user, the model, or both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// How important the block is, from 0 (entirely optional) to 1 (effectively
    /// required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// When the underlying data last changed, an RFC 3339 date-time such as
    /// `2025-01-12T15:00:58Z`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

impl Annotations {
    /// No hints.
    pub fn new() -> Self {
        Annotations::default()
    }

    /// With this audience.
    pub fn with_audience(mut self, audience: impl IntoIterator<Item = Role>) -> Self {
        self.audience = Some(audience.into_iter().collect());
        self
    }

    /// With this priority (checked by [`validate`](Self::validate), not here).
    pub fn with_priority(mut self, priority: f64) -> Self {
        self.priority = Some(priority);
        self
    }

    /// With this last-modified time, an RFC 3339 date-time (checked by
    /// [`validate`](Self::validate), not here).
    pub fn with_last_modified(mut self, last_modified: impl Into<String>) -> Self {
        self.last_modified = Some(last_modified.into());
        self
    }

    /// Checks that `priority` is a number in `0..=1` and `lastModified` an RFC 3339
    /// date-time (`YYYY-MM-DDTHH:MM:SS`, optional fraction, `Z` or an offset).
    pub fn validate(&self) -> Result<(), ContentError> {
        self.check("annotations")
    }

    fn check(&self, block: &'static str) -> Result<(), ContentError> {
        if let Some(priority) = self.priority
            && !(0.0..=1.0).contains(&priority)
        {
            return Err(ContentError::Priority {
                block,
                value: priority,
            });
        }
        if let Some(time) = &self.last_modified
            && !is_rfc3339(time)
        {
            return Err(ContentError::LastModified {
                block,
                value: time.clone(),
            });
        }
        Ok(())
    }
}

/// The contents of an embedded resource: its URI with its text
/// (MCP's `TextResourceContents`) or its base64 bytes (`BlobResourceContents`).
///
/// On the wire one object with `uri`, optional `mimeType`, and exactly one of `text` and
/// `blob`; an object with both or neither is refused.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ResourceContents {
    /// A text resource.
    Text {
        /// The resource's URI.
        uri: String,
        /// Its MIME type, if known.
        media_type: Option<String>,
        /// The text.
        text: String,
    },
    /// A binary resource.
    Blob {
        /// The resource's URI.
        uri: String,
        /// Its MIME type, if known.
        media_type: Option<String>,
        /// The bytes, base64-encoded.
        blob: String,
    },
}

impl ResourceContents {
    /// A text resource without a MIME type.
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        ResourceContents::Text {
            uri: uri.into(),
            media_type: None,
            text: text.into(),
        }
    }

    /// A binary resource (base64 `blob`) without a MIME type.
    pub fn blob(uri: impl Into<String>, blob: impl Into<String>) -> Self {
        ResourceContents::Blob {
            uri: uri.into(),
            media_type: None,
            blob: blob.into(),
        }
    }

    /// With this MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        *self.media_type_mut() = Some(mime_type.into());
        self
    }

    /// The resource's URI.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text { uri, .. } | ResourceContents::Blob { uri, .. } => uri,
        }
    }

    /// The resource's MIME type, if known.
    pub fn media_type(&self) -> Option<&str> {
        match self {
            ResourceContents::Text { media_type, .. }
            | ResourceContents::Blob { media_type, .. } => media_type.as_deref(),
        }
    }

    fn media_type_mut(&mut self) -> &mut Option<String> {
        match self {
            ResourceContents::Text { media_type, .. }
            | ResourceContents::Blob { media_type, .. } => media_type,
        }
    }
}

/// The wire form of [`ResourceContents`], both ways.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResourceContentsWire<'a> {
    #[serde(borrow)]
    uri: std::borrow::Cow<'a, str>,
    #[serde(default, skip_serializing_if = "Option::is_none", borrow)]
    mime_type: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none", borrow)]
    text: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none", borrow)]
    blob: Option<std::borrow::Cow<'a, str>>,
}

impl Serialize for ResourceContents {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use std::borrow::Cow::Borrowed;
        let (uri, media_type, text, blob) = match self {
            ResourceContents::Text {
                uri,
                media_type,
                text,
            } => (uri, media_type, Some(Borrowed(text.as_str())), None),
            ResourceContents::Blob {
                uri,
                media_type,
                blob,
            } => (uri, media_type, None, Some(Borrowed(blob.as_str()))),
        };
        ResourceContentsWire {
            uri: Borrowed(uri),
            mime_type: media_type.as_deref().map(Borrowed),
            text,
            blob,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for ResourceContents {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let wire = ResourceContentsWire::deserialize(d)?;
        let uri = wire.uri.into_owned();
        let media_type = wire.mime_type.map(std::borrow::Cow::into_owned);
        match (wire.text, wire.blob) {
            (Some(text), None) => Ok(ResourceContents::Text {
                uri,
                media_type,
                text: text.into_owned(),
            }),
            (None, Some(blob)) => Ok(ResourceContents::Blob {
                uri,
                media_type,
                blob: blob.into_owned(),
            }),
            (Some(_), Some(_)) => Err(D::Error::custom(
                "resource contents carry both `text` and `blob`; expected one",
            )),
            (None, None) => Err(D::Error::custom(
                "resource contents carry neither `text` nor `blob`; expected one",
            )),
        }
    }
}

/// A link to a resource (MCP's `ResourceLink`): what it is and where, for the client
/// to read or fetch; nothing of its contents.
///
/// ```
/// use dsh_cards::{ContentBlock, ResourceLink};
///
/// let link = ResourceLink::new("file:///logs/run.txt", "run.txt")
///     .with_title("Build log")
///     .with_mime_type("text/plain");
/// let block = ContentBlock::from(link);
/// assert_eq!(block.media_type(), Some("text/plain"));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceLink {
    /// The resource's URI.
    pub uri: String,
    /// Its programmatic name (shown when there is no title).
    pub name: String,
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resource is, for the model or the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its MIME type, if known (`mimeType` on the wire).
    #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// Its size in bytes (before any base64 encoding), if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
}

impl ResourceLink {
    /// A link with a URI and a name.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceLink {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            media_type: None,
            size: None,
            annotations: None,
        }
    }

    /// With a title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// With a description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// With a MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.media_type = Some(mime_type.into());
        self
    }

    /// With a size in bytes.
    pub fn with_size(mut self, size: u64) -> Self {
        self.size = Some(size);
        self
    }

    /// With annotations.
    pub fn with_annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = Some(annotations);
        self
    }
}

/// What [`ContentBlock::validate`] found wrong with a block. Each names the block's
/// wire `type` (`annotations` for [`Annotations::validate`]).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ContentError {
    /// `data` or `blob` is not base64.
    NotBase64 {
        /// The block's type.
        block: &'static str,
        /// `data` or `blob`.
        field: &'static str,
        /// What is wrong, e.g. `unexpected '-' at offset 3`.
        reason: String,
    },
    /// A MIME type not of the form `type/subtype` (with optional `; name=value`
    /// parameters).
    MediaType {
        /// The block's type.
        block: &'static str,
        /// The MIME type given.
        value: String,
    },
    /// A URI without a scheme (`file:`, `https:`, …).
    Uri {
        /// The block's type.
        block: &'static str,
        /// The URI given.
        value: String,
    },
    /// A priority outside `0..=1`.
    Priority {
        /// The block's type.
        block: &'static str,
        /// The priority given.
        value: f64,
    },
    /// A `lastModified` that is not an RFC 3339 date-time.
    LastModified {
        /// The block's type.
        block: &'static str,
        /// The value given.
        value: String,
    },
}

impl fmt::Display for ContentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ContentError::NotBase64 {
                block,
                field,
                reason,
            } => write!(f, "{block} `{field}` is not base64: {reason}"),
            ContentError::MediaType { block, value } => write!(
                f,
                "{block} MIME type {value:?} is not of the form `type/subtype`"
            ),
            ContentError::Uri { block, value } => {
                write!(f, "{block} URI {value:?} has no scheme (such as `file:`)")
            }
            ContentError::Priority { block, value } => {
                write!(f, "{block} annotation `priority` {value} is outside 0..=1")
            }
            ContentError::LastModified { block, value } => write!(
                f,
                "{block} annotation `lastModified` {value:?} is not an RFC 3339 date-time"
            ),
        }
    }
}

impl std::error::Error for ContentError {}

// ---- checks -----------------------------------------------------------------------

fn check_base64(block: &'static str, field: &'static str, data: &str) -> Result<(), ContentError> {
    base64_problem(data).map_or(Ok(()), |reason| {
        Err(ContentError::NotBase64 {
            block,
            field,
            reason,
        })
    })
}

/// Why `data` is not standard base64 (RFC 4648 §4; padding optional), if it is not.
fn base64_problem(data: &str) -> Option<String> {
    let bytes = data.as_bytes();
    let body = data.trim_end_matches('=');
    let padding = bytes.len() - body.len();
    if let Some((at, c)) = body
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '+' || c == '/'))
    {
        return Some(format!("unexpected {c:?} at offset {at}"));
    }
    if body.len() % 4 == 1 {
        return Some(format!(
            "{} characters of data cannot end a base64 quantum",
            body.len()
        ));
    }
    if padding > 0 && (padding > 2 || !bytes.len().is_multiple_of(4)) {
        return Some(format!(
            "{padding} padding character(s) after {} characters",
            body.len()
        ));
    }
    None
}

fn check_media_type(block: &'static str, value: &str) -> Result<(), ContentError> {
    if is_media_type(value) {
        Ok(())
    } else {
        Err(ContentError::MediaType {
            block,
            value: value.to_string(),
        })
    }
}

/// An RFC 9110 token character.
fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

fn is_token(s: &str) -> bool {
    !s.is_empty() && s.chars().all(is_tchar)
}

/// `type "/" subtype *( OWS ";" OWS name "=" ( token / quoted-string ) )` (RFC 9110 §8.3.1).
fn is_media_type(value: &str) -> bool {
    let mut parts = value.split(';');
    let essence = parts.next().unwrap_or_default();
    let Some((ty, subtype)) = essence.split_once('/') else {
        return false;
    };
    if !is_token(ty) || !is_token(subtype.trim_end_matches([' ', '\t'])) {
        return false;
    }
    parts.all(|param| {
        let param = param.trim_matches([' ', '\t']);
        let Some((name, value)) = param.split_once('=') else {
            return false;
        };
        let quoted = value.len() >= 2 && value.starts_with('"') && value.ends_with('"');
        is_token(name) && (is_token(value) || quoted)
    })
}

fn check_uri(block: &'static str, uri: &str) -> Result<(), ContentError> {
    // RFC 3986: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), then ':'.
    let scheme_ok = uri.split_once(':').is_some_and(|(scheme, _)| {
        let mut chars = scheme.chars();
        chars.next().is_some_and(|c| c.is_ascii_alphabetic())
            && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    });
    if scheme_ok {
        Ok(())
    } else {
        Err(ContentError::Uri {
            block,
            value: uri.to_string(),
        })
    }
}

/// RFC 3339 `date-time`: `YYYY-MM-DD`, `T` (or `t`, or a space as its §5.6 note allows),
/// `HH:MM:SS`, an optional fraction, then `Z`, `z` or `±HH:MM`; fields in range (a
/// leap second allowed, days checked against the month and leap years).
fn is_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |range: std::ops::Range<usize>| -> Option<u32> {
        let part = b.get(range)?;
        part.iter().try_fold(0u32, |n, &d| {
            d.is_ascii_digit().then(|| n * 10 + u32::from(d - b'0'))
        })
    };
    let at = |i: usize, c: u8| b.get(i) == Some(&c);
    let (Some(year), Some(month), Some(day)) = (digits(0..4), digits(5..7), digits(8..10)) else {
        return false;
    };
    if !(at(4, b'-') && at(7, b'-') && matches!(b.get(10), Some(b'T' | b't' | b' '))) {
        return false;
    }
    let (Some(hour), Some(minute), Some(second)) = (digits(11..13), digits(14..16), digits(17..19))
    else {
        return false;
    };
    if !(at(13, b':') && at(16, b':')) {
        return false;
    }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    if day == 0 || day > days || hour > 23 || minute > 59 || second > 60 {
        return false;
    }
    let mut i = 19;
    if at(i, b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    match b.get(i) {
        Some(b'Z' | b'z') => i + 1 == b.len(),
        Some(b'+' | b'-') => {
            let (Some(oh), Some(om)) = (digits(i + 1..i + 3), digits(i + 4..i + 6)) else {
                return false;
            };
            at(i + 3, b':') && oh <= 23 && om <= 59 && i + 6 == b.len()
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_shapes() {
        for ok in [
            "", "TQ==", "TWE=", "TWFu", "TQ", "TWE", "TWF", "a+/9", "UklGRg==",
        ] {
            assert_eq!(base64_problem(ok), None, "{ok}");
        }
        for (bad, why) in [
            ("T", "1 characters of data cannot end a base64 quantum"),
            ("TQ=", "1 padding character(s) after 2 characters"),
            ("TQ===", "3 padding character(s) after 2 characters"),
            ("TW-u", "unexpected '-' at offset 2"),
            ("TW u", "unexpected ' ' at offset 2"),
            ("TQ==TQ==", "unexpected '=' at offset 2"),
        ] {
            assert_eq!(base64_problem(bad).as_deref(), Some(why), "{bad}");
        }
    }

    #[test]
    fn media_type_shapes() {
        for ok in [
            "audio/wav",
            "image/svg+xml",
            "text/plain; charset=utf-8",
            "text/plain;charset=\"utf-8\"",
            "application/vnd.ms-excel",
        ] {
            assert!(is_media_type(ok), "{ok}");
        }
        for bad in [
            "",
            "wav",
            "audio/",
            "/wav",
            "audio wav/x",
            "text/plain; charset",
            "a/b/c",
        ] {
            assert!(!is_media_type(bad), "{bad}");
        }
    }

    #[test]
    fn rfc3339_shapes() {
        for ok in [
            "2025-01-12T15:00:58Z",
            "2025-01-12t15:00:58z",
            "2025-01-12 15:00:58Z",
            "2024-02-29T23:59:60.123456+05:30",
            "1999-12-31T00:00:00-00:00",
        ] {
            assert!(is_rfc3339(ok), "{ok}");
        }
        for bad in [
            "2025-01-12",
            "2025-01-12T15:00:58",
            "2025-02-29T00:00:00Z",
            "2025-13-01T00:00:00Z",
            "2025-01-12T24:00:00Z",
            "2025-01-12T15:00:58.Z",
            "2025-01-12T15:00:58+0530",
            "2025-01-12T15:00:58Zjunk",
            "yesterday",
        ] {
            assert!(!is_rfc3339(bad), "{bad}");
        }
    }
}
