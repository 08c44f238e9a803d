//! Content blocks between the runtime's vocabulary and rmcp's: every MCP kind (text,
//! image, audio, embedded resource, resource link) with its annotations, field for field.
//!
//! Served: a block that is not valid ([`ContentBlock::validate`]: data that is not
//! base64, a malformed MIME type or URI, a priority outside `0..=1`, a `lastModified`
//! that is not RFC 3339) would break a client's parser, so it is sent as a text block
//! naming the problem instead. Imported: blocks are taken as the server sent them (the
//! client of the imported tool sees what the server said); `_meta` and a link's `icons`
//! have no place in the vocabulary and are left out.

use dsh_runtime::content::{Annotations, ContentBlock, ResourceContents, ResourceLink, Role};
use rmcp::model as m;

/// A block as rmcp's, or a text block naming why it cannot be sent.
pub(crate) fn to_mcp(block: &ContentBlock) -> m::ContentBlock {
    if let Err(problem) = block.validate() {
        return m::ContentBlock::text(format!("[{} content omitted: {problem}]", block.kind()));
    }
    match block {
        ContentBlock::Text { text, annotations } => {
            let mut out = m::TextContent::new(text.clone());
            out.annotations = annotations.as_ref().map(to_mcp_annotations);
            m::ContentBlock::Text(out)
        }
        ContentBlock::Image {
            data,
            media_type,
            annotations,
        } => {
            let mut out = m::ImageContent::new(data.clone(), media_type.clone());
            out.annotations = annotations.as_ref().map(to_mcp_annotations);
            m::ContentBlock::Image(out)
        }
        ContentBlock::Audio {
            data,
            media_type,
            annotations,
        } => {
            let mut out = m::AudioContent::new(data.clone(), media_type.clone());
            out.annotations = annotations.as_ref().map(to_mcp_annotations);
            m::ContentBlock::Audio(out)
        }
        ContentBlock::Resource {
            resource,
            annotations,
        } => {
            let contents = match resource {
                ResourceContents::Text { uri, text, .. } => {
                    m::ResourceContents::TextResourceContents {
                        uri: uri.clone(),
                        mime_type: resource.media_type().map(str::to_string),
                        text: text.clone(),
                        meta: None,
                    }
                }
                ResourceContents::Blob { uri, blob, .. } => {
                    m::ResourceContents::BlobResourceContents {
                        uri: uri.clone(),
                        mime_type: resource.media_type().map(str::to_string),
                        blob: blob.clone(),
                        meta: None,
                    }
                }
                other => return json_text(other),
            };
            let mut out = m::EmbeddedResource::new(contents);
            out.annotations = annotations.as_ref().map(to_mcp_annotations);
            m::ContentBlock::Resource(out)
        }
        ContentBlock::ResourceLink(link) => {
            let mut out = m::Resource::new(link.uri.clone(), link.name.clone());
            out.title = link.title.clone();
            out.description = link.description.clone();
            out.mime_type = link.media_type.clone();
            out.size = link.size;
            out.annotations = link.annotations.as_ref().map(to_mcp_annotations);
            m::ContentBlock::ResourceLink(out)
        }
        // A block kind added to the vocabulary later: its JSON, so nothing is lost.
        other => json_text(other),
    }
}

/// A value as a text block of its JSON.
fn json_text(value: &impl serde::Serialize) -> m::ContentBlock {
    m::ContentBlock::text(
        serde_json::to_string(value).unwrap_or_else(|e| format!("[content block: {e}]")),
    )
}

fn to_mcp_annotations(a: &Annotations) -> m::Annotations {
    let mut out = m::Annotations::default();
    out.audience = a.audience.as_ref().map(|roles| {
        roles
            .iter()
            .filter_map(|role| match role {
                Role::User => Some(m::Role::User),
                Role::Assistant => Some(m::Role::Assistant),
                // A role added to the vocabulary later has no MCP spelling.
                _ => None,
            })
            .collect()
    });
    // MCP's priority is a JSON number in 0..=1 (validated); rmcp holds it as `f32`,
    // which loses only digits no client reads.
    out.priority = a.priority.map(|p| p as f32);
    out.last_modified = a.last_modified.clone();
    out
}

/// An rmcp block (as an imported server sent it) as the runtime's, annotations kept.
pub(crate) fn from_mcp(block: &m::ContentBlock) -> ContentBlock {
    let (block, annotations) = match block {
        m::ContentBlock::Text(t) => (ContentBlock::text(t.text.clone()), &t.annotations),
        m::ContentBlock::Image(i) => (
            ContentBlock::image(i.data.clone(), i.mime_type.clone()),
            &i.annotations,
        ),
        m::ContentBlock::Audio(a) => (
            ContentBlock::audio(a.data.clone(), a.mime_type.clone()),
            &a.annotations,
        ),
        m::ContentBlock::Resource(r) => {
            let contents = match &r.resource {
                m::ResourceContents::TextResourceContents {
                    uri,
                    mime_type,
                    text,
                    ..
                } => with_mime(ResourceContents::text(uri.clone(), text.clone()), mime_type),
                m::ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    ..
                } => with_mime(ResourceContents::blob(uri.clone(), blob.clone()), mime_type),
                // rmcp's enum is non_exhaustive: a later kind.
                _ => return from_json(block),
            };
            (ContentBlock::from(contents), &r.annotations)
        }
        m::ContentBlock::ResourceLink(r) => {
            let mut link = ResourceLink::new(r.uri.clone(), r.name.clone());
            link.title = r.title.clone();
            link.description = r.description.clone();
            link.media_type = r.mime_type.clone();
            link.size = r.size;
            (ContentBlock::from(link), &r.annotations)
        }
        // rmcp's enum is non_exhaustive: a later kind.
        other => return from_json(other),
    };
    match annotations {
        Some(a) => block.with_annotations(from_mcp_annotations(a)),
        None => block,
    }
}

fn with_mime(contents: ResourceContents, mime_type: &Option<String>) -> ResourceContents {
    match mime_type {
        Some(mime) => contents.with_mime_type(mime.clone()),
        None => contents,
    }
}

/// A block kind rmcp knows and the vocabulary does not: its JSON as text.
fn from_json(block: &m::ContentBlock) -> ContentBlock {
    ContentBlock::text(serde_json::to_string(block).unwrap_or_default())
}

fn from_mcp_annotations(a: &m::Annotations) -> Annotations {
    Annotations {
        audience: a.audience.as_ref().map(|roles| {
            roles
                .iter()
                .map(|role| match role {
                    m::Role::User => Role::User,
                    m::Role::Assistant => Role::Assistant,
                })
                .collect()
        }),
        // Through the shortest decimal of the `f32` (0.7, not 0.699999988079071).
        priority: a
            .priority
            .map(|p| p.to_string().parse::<f64>().unwrap_or(f64::from(p))),
        last_modified: a.last_modified.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind, annotated, goes out as MCP's JSON and comes back unchanged.
    #[test]
    fn every_kind_round_trips_through_rmcp() {
        let hints = Annotations::new()
            .with_audience([Role::User, Role::Assistant])
            .with_priority(0.7)
            .with_last_modified("2025-05-03T14:30:00Z");
        let blocks = [
            ContentBlock::text("hello"),
            ContentBlock::image("TWFu", "image/png"),
            ContentBlock::audio("TWFu", "audio/wav"),
            ContentBlock::resource_text("test://t", "text").with_mime_type("text/plain"),
            ContentBlock::resource_text("test://t2", "no type"),
            ContentBlock::resource_blob("test://b", "TWFu", "application/pdf"),
            ContentBlock::from(
                ResourceLink::new("test://l", "l")
                    .with_title("L")
                    .with_description("a link")
                    .with_mime_type("text/csv")
                    .with_size(3),
            ),
        ];
        for block in blocks {
            for block in [block.clone(), block.with_annotations(hints.clone())] {
                let sent = to_mcp(&block);
                // As written on the wire (an `f32` priority is written in its shortest
                // form, 0.7).
                let wire: serde_json::Value =
                    serde_json::from_str(&serde_json::to_string(&sent).unwrap()).unwrap();
                assert_eq!(wire, serde_json::to_value(&block).unwrap(), "{block:?}");
                assert_eq!(from_mcp(&sent), block);
            }
        }
    }

    #[test]
    fn an_invalid_block_is_sent_as_text_naming_the_problem() {
        let sent = to_mcp(&ContentBlock::audio("UklG RiQ=", "audio/wav"));
        assert_eq!(
            sent.as_text().map(|t| t.text.as_str()),
            Some("[audio content omitted: audio `data` is not base64: unexpected ' ' at offset 4]")
        );
    }
}
