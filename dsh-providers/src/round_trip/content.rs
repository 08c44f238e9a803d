//! A result's content blocks as a provider's tool result takes them: the text the model
//! reads, and the parts that travel beside it (images, PDF files, text documents) where
//! the provider's API carries them in a tool result.
//!
//! Nothing is dropped without a word: a block a provider cannot carry, or one that is
//! not valid ([`ContentBlock::validate`]: data that is not base64, a malformed MIME
//! type, …), becomes a line of the text saying what was left out and why. Annotations
//! are hints for MCP clients and are not sent to model APIs.

use std::fmt::Write as _;

use dsh_runtime::ToolResult;
use dsh_runtime::content::{ContentBlock, ResourceContents, ResourceLink};

use super::IMAGE_FALLBACK;

/// What a provider's tool result carries besides text.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Takes {
    /// The API's name, for the lines saying what was left out.
    pub(crate) api: &'static str,
    /// Images (image blocks, and embedded resources of an `image/*` type).
    pub(crate) images: bool,
    /// PDF files (embedded resources of type `application/pdf`).
    pub(crate) pdf: bool,
    /// Text resources as documents of their own (else they join the text).
    pub(crate) text_documents: bool,
}

/// A part that travels beside the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Part<'a> {
    /// An image: its MIME type and base64 data.
    Image { media_type: &'a str, data: &'a str },
    /// A PDF file: base64 data, and the URI it came from.
    Pdf { data: &'a str, uri: &'a str },
    /// A text resource as a document: its URI and text.
    Document { uri: &'a str, text: &'a str },
}

impl Part<'_> {
    /// The last segment of the part's URI, for a file name (`file.pdf` when it has none).
    pub(crate) fn file_name(uri: &str) -> &str {
        let path = uri.split(['?', '#']).next().unwrap_or_default();
        match path.rsplit('/').next() {
            Some(last) if !last.is_empty() && !last.contains(':') => last,
            _ => "file.pdf",
        }
    }
}

/// A result as one provider takes it.
#[derive(Debug)]
pub(crate) struct Rendered<'a> {
    /// The model-facing text: the text blocks, a line for each block that does not
    /// travel as a part, text resources and links, then every context; one paragraph
    /// each.
    pub(crate) text: String,
    /// The parts, in content order.
    pub(crate) parts: Vec<Part<'a>>,
}

/// `result`'s content as a provider that takes `takes` carries it.
pub(crate) fn render(result: &ToolResult, takes: Takes) -> Rendered<'_> {
    let mut text: Vec<String> = Vec::new();
    let mut parts = Vec::new();
    for block in result.content() {
        if let ContentBlock::Text { text: t, .. } = block {
            text.push(t.clone());
            continue;
        }
        if let Err(problem) = block.validate() {
            text.push(format!(
                "[{} omitted: {problem}]",
                describe(block).unwrap_or_else(|| block.kind().to_string())
            ));
            continue;
        }
        match block {
            ContentBlock::Image {
                data, media_type, ..
            } => {
                if takes.images {
                    parts.push(Part::Image { media_type, data });
                } else {
                    text.push(IMAGE_FALLBACK.replace("{media_type}", media_type));
                }
            }
            ContentBlock::Audio { media_type, .. } => text.push(format!(
                "[audio ({media_type}) omitted: {} takes no audio in tool results]",
                takes.api
            )),
            ContentBlock::Resource { resource, .. } => {
                resource_part(resource, takes, &mut text, &mut parts);
            }
            ContentBlock::ResourceLink(link) => text.push(link_line(link)),
            // A block kind added to the vocabulary later: its JSON, so nothing is lost.
            other => text.push(
                serde_json::to_string(other)
                    .unwrap_or_else(|e| format!("[{} content omitted: {e}]", other.kind())),
            ),
        }
    }
    text.extend(result.contexts().iter().cloned());
    Rendered {
        text: text.join("\n\n"),
        parts,
    }
}

fn resource_part<'a>(
    resource: &'a ResourceContents,
    takes: Takes,
    text: &mut Vec<String>,
    parts: &mut Vec<Part<'a>>,
) {
    match resource {
        ResourceContents::Text { uri, text: t, .. } => {
            if takes.text_documents {
                parts.push(Part::Document { uri, text: t });
            } else {
                let mut framed = format!("[resource {uri}");
                if let Some(media_type) = resource.media_type() {
                    let _ = write!(framed, " ({media_type})");
                }
                let _ = write!(framed, "]\n{t}");
                text.push(framed);
            }
        }
        ResourceContents::Blob { uri, blob, .. } => {
            let media_type = resource.media_type().unwrap_or_default();
            let essence = media_type
                .split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase();
            if takes.images && essence.starts_with("image/") {
                parts.push(Part::Image {
                    media_type,
                    data: blob,
                });
            } else if takes.pdf && essence == "application/pdf" {
                parts.push(Part::Pdf { data: blob, uri });
            } else {
                let what = if media_type.is_empty() {
                    "binary data of no stated type".to_string()
                } else {
                    format!("{media_type} files")
                };
                text.push(format!(
                    "[resource {uri} ({}) omitted: {} takes no {what} in tool results]",
                    if media_type.is_empty() {
                        "binary"
                    } else {
                        media_type
                    },
                    takes.api
                ));
            }
        }
        // A resource kind added later: its JSON, so nothing is lost.
        other => text.push(
            serde_json::to_string(other)
                .unwrap_or_else(|e| format!("[resource {} omitted: {e}]", other.uri())),
        ),
    }
}

/// `[resource link: <uri> (name "title", mime, N bytes): description]`.
fn link_line(link: &ResourceLink) -> String {
    let mut about = vec![link.name.clone()];
    if let Some(title) = &link.title {
        about[0] = format!("{} {title:?}", link.name);
    }
    if let Some(media_type) = &link.media_type {
        about.push(media_type.clone());
    }
    if let Some(size) = link.size {
        about.push(format!("{size} bytes"));
    }
    let mut line = format!("[resource link: {} ({})", link.uri, about.join(", "));
    if let Some(description) = &link.description {
        let _ = write!(line, ": {description}");
    }
    line.push(']');
    line
}

/// What a block is, for a line saying it was left out.
fn describe(block: &ContentBlock) -> Option<String> {
    match block {
        ContentBlock::Image { media_type, .. } => Some(format!("image ({media_type})")),
        ContentBlock::Audio { media_type, .. } => Some(format!("audio ({media_type})")),
        ContentBlock::Resource { resource, .. } => Some(format!("resource {}", resource.uri())),
        ContentBlock::ResourceLink(link) => Some(format!("resource link {}", link.uri)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_come_from_the_uri() {
        assert_eq!(Part::file_name("file:///docs/report.pdf"), "report.pdf");
        assert_eq!(Part::file_name("https://x.test/a/b.pdf?v=2#p1"), "b.pdf");
        assert_eq!(Part::file_name("urn:report"), "file.pdf");
        assert_eq!(Part::file_name("https://x.test/dir/"), "file.pdf");
    }

    #[test]
    fn link_lines_carry_every_field_given() {
        let full = ResourceLink::new("file:///a.csv", "a.csv")
            .with_title("Sales")
            .with_mime_type("text/csv")
            .with_size(12)
            .with_description("Q3 numbers");
        assert_eq!(
            link_line(&full),
            "[resource link: file:///a.csv (a.csv \"Sales\", text/csv, 12 bytes): Q3 numbers]"
        );
        assert_eq!(
            link_line(&ResourceLink::new("test://x", "x")),
            "[resource link: test://x (x)]"
        );
    }
}
