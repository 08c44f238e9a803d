//! Content blocks on the wire: MCP's JSON for every block kind (the shapes of the
//! schema's examples for `TextContent`, `ImageContent`, `AudioContent`,
//! `EmbeddedResource`, `ResourceLink`, `TextResourceContents` and
//! `BlobResourceContents`, revisions 2025-11-25 and 2026-07-28), read back into the same
//! value; what a reader refuses; and what `validate` reports.

use dsh_cards::{Annotations, ContentBlock, ContentError, ResourceContents, ResourceLink, Role};

/// `json` reads into `expected`, and `expected` writes `json` back (the same members
/// and values, nothing more).
fn wire(expected: &ContentBlock, json: &str) {
    let value: serde_json::Value = serde_json::from_str(json).expect("valid JSON");
    let read: ContentBlock = serde_json::from_str(json).expect("MCP's JSON reads");
    assert_eq!(&read, expected);
    assert_eq!(serde_json::to_value(expected).unwrap(), value);
    assert_eq!(read.validate(), Ok(()), "{json}");
}

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";

#[test]
fn the_type_tag_comes_first() {
    assert_eq!(
        serde_json::to_string(&ContentBlock::audio("TWFu", "audio/wav")).unwrap(),
        r#"{"type":"audio","data":"TWFu","mimeType":"audio/wav"}"#
    );
}

#[test]
fn text() {
    wire(
        &ContentBlock::text("3 files changed"),
        r#"{"type": "text", "text": "3 files changed"}"#,
    );
}

#[test]
fn image_with_annotations() {
    wire(
        &ContentBlock::image(PNG, "image/png").with_annotations(Annotations {
            audience: Some(vec![Role::User]),
            priority: Some(0.9),
            last_modified: None,
        }),
        &format!(
            r#"{{"type": "image", "data": "{PNG}", "mimeType": "image/png",
                "annotations": {{"audience": ["user"], "priority": 0.9}}}}"#
        ),
    );
}

#[test]
fn image_written_by_an_older_version_reads_with_media_type() {
    let old: ContentBlock =
        serde_json::from_str(r#"{"type":"image","data":"TWFu","media_type":"image/gif"}"#).unwrap();
    assert_eq!(old, ContentBlock::image("TWFu", "image/gif"));
    assert_eq!(
        serde_json::to_string(&old).unwrap(),
        r#"{"type":"image","data":"TWFu","mimeType":"image/gif"}"#
    );
}

#[test]
fn audio() {
    wire(
        &ContentBlock::audio(WAV, "audio/wav"),
        &format!(r#"{{"type": "audio", "data": "{WAV}", "mimeType": "audio/wav"}}"#),
    );
}

#[test]
fn embedded_text_resource_with_annotations() {
    let block = ContentBlock::resource_text(
        "file:///project/src/lib.rs",
        "pub fn answer() -> u8 {\n    42\n}",
    )
    .with_mime_type("text/x-rust")
    .with_annotations(
        Annotations::new()
            .with_audience([Role::User, Role::Assistant])
            .with_priority(0.7)
            .with_last_modified("2025-05-03T14:30:00Z"),
    );
    wire(
        &block,
        r#"{
          "type": "resource",
          "resource": {
            "uri": "file:///project/src/lib.rs",
            "mimeType": "text/x-rust",
            "text": "pub fn answer() -> u8 {\n    42\n}"
          },
          "annotations": {
            "audience": ["user", "assistant"],
            "priority": 0.7,
            "lastModified": "2025-05-03T14:30:00Z"
          }
        }"#,
    );
    assert_eq!(block.media_type(), Some("text/x-rust"));
    assert_eq!(block.kind(), "resource");
}

#[test]
fn embedded_blob_resource() {
    wire(
        &ContentBlock::resource_blob("file:///pixel.png", PNG, "image/png"),
        &format!(
            r#"{{"type": "resource", "resource": {{"uri": "file:///pixel.png", "mimeType": "image/png", "blob": "{PNG}"}}}}"#
        ),
    );
}

#[test]
fn resource_contents_alone() {
    let text: ResourceContents = serde_json::from_str(
        r#"{"uri": "file:///example.txt", "mimeType": "text/plain", "text": "Resource content"}"#,
    )
    .unwrap();
    assert_eq!(
        text,
        ResourceContents::text("file:///example.txt", "Resource content")
            .with_mime_type("text/plain")
    );
    let blob: ResourceContents =
        serde_json::from_str(r#"{"uri": "test://b", "blob": "TWFu"}"#).unwrap();
    assert_eq!(blob, ResourceContents::blob("test://b", "TWFu"));
    assert_eq!(blob.media_type(), None);
    assert_eq!(blob.uri(), "test://b");
}

#[test]
fn resource_link_minimal_and_full() {
    wire(
        &ContentBlock::resource_link("file:///project/src/main.rs", "main.rs"),
        r#"{"type": "resource_link", "uri": "file:///project/src/main.rs", "name": "main.rs"}"#,
    );
    wire(
        &ContentBlock::from(
            ResourceLink::new("file:///project/src/main.rs", "main.rs")
                .with_title("Entry point")
                .with_description("Primary application entry point")
                .with_mime_type("text/x-rust")
                .with_size(1024)
                .with_annotations(Annotations::new().with_priority(0.0)),
        ),
        r#"{"type": "resource_link", "uri": "file:///project/src/main.rs", "name": "main.rs",
            "title": "Entry point", "description": "Primary application entry point",
            "mimeType": "text/x-rust", "size": 1024, "annotations": {"priority": 0.0}}"#,
    );
}

#[test]
fn annotations_go_on_every_kind() {
    let hints = Annotations::new().with_audience([Role::Assistant]);
    for block in [
        ContentBlock::text("t"),
        ContentBlock::image("TWFu", "image/png"),
        ContentBlock::audio("TWFu", "audio/mpeg"),
        ContentBlock::resource_text("test://t", "t"),
        ContentBlock::resource_blob("test://b", "TWFu", "application/pdf"),
        ContentBlock::resource_link("test://l", "l"),
    ] {
        let kind = block.kind();
        assert_eq!(block.annotations(), None);
        let annotated = block.with_annotations(hints.clone());
        assert_eq!(annotated.annotations(), Some(&hints), "{kind}");
        let json = serde_json::to_value(&annotated).unwrap();
        assert_eq!(json["type"], kind);
        assert_eq!(
            json["annotations"],
            serde_json::json!({"audience": ["assistant"]}),
            "{kind}"
        );
        let back: ContentBlock = serde_json::from_value(json).unwrap();
        assert_eq!(back, annotated);
    }
}

#[test]
fn unknown_fields_are_ignored() {
    let block: ContentBlock = serde_json::from_str(
        r#"{"type":"resource_link","uri":"test://x","name":"x","icons":[{"src":"test://i"}],"_meta":{"k":1}}"#,
    )
    .unwrap();
    assert_eq!(block, ContentBlock::resource_link("test://x", "x"));
}

fn refused(json: &str) -> String {
    match serde_json::from_str::<ContentBlock>(json) {
        Ok(block) => panic!("{json} was accepted as {block:?}"),
        Err(err) => err.to_string(),
    }
}

#[test]
fn a_reader_refuses_what_mcp_does_not_allow() {
    assert!(
        refused(r#"{"type":"resource","resource":{"uri":"test://x","text":"a","blob":"TWFu"}}"#)
            .contains("both `text` and `blob`")
    );
    assert!(
        refused(r#"{"type":"resource","resource":{"uri":"test://x"}}"#)
            .contains("neither `text` nor `blob`")
    );
    assert!(refused(r#"{"type":"audio","data":"TWFu"}"#).contains("mimeType"));
    assert!(refused(r#"{"type":"resource_link","uri":"test://x"}"#).contains("name"));
    assert!(refused(r#"{"type":"video","data":"TWFu"}"#).contains("video"));
    assert!(
        refused(r#"{"type":"text","text":"a","annotations":{"audience":["robot"]}}"#)
            .contains("robot")
    );
}

#[test]
fn validate_names_the_block_and_the_problem() {
    let cases: Vec<(ContentBlock, &str)> = vec![
        (
            ContentBlock::audio("UklG RiQ=", "audio/wav"),
            "audio `data` is not base64: unexpected ' ' at offset 4",
        ),
        (
            ContentBlock::image("TWFu", "png"),
            "image MIME type \"png\" is not of the form `type/subtype`",
        ),
        (
            ContentBlock::resource_blob("test://b", "T", "application/pdf"),
            "resource `blob` is not base64: 1 characters of data cannot end a base64 quantum",
        ),
        (
            ContentBlock::resource_text("notes.txt", "x"),
            "resource URI \"notes.txt\" has no scheme (such as `file:`)",
        ),
        (
            ContentBlock::resource_link("test://x", "x").with_mime_type("text plain"),
            "resource_link MIME type \"text plain\" is not of the form `type/subtype`",
        ),
        (
            ContentBlock::text("x").with_annotations(Annotations::new().with_priority(1.5)),
            "text annotation `priority` 1.5 is outside 0..=1",
        ),
        (
            ContentBlock::text("x")
                .with_annotations(Annotations::new().with_last_modified("2025-01-12")),
            "text annotation `lastModified` \"2025-01-12\" is not an RFC 3339 date-time",
        ),
    ];
    for (block, message) in cases {
        let err = block.validate().expect_err(message);
        assert_eq!(err.to_string(), message);
    }
    assert!(matches!(
        Annotations::new().with_priority(-0.1).validate(),
        Err(ContentError::Priority { block: "annotations", value }) if value == -0.1
    ));
    assert_eq!(
        Annotations::new()
            .with_priority(1.0)
            .with_last_modified("2025-01-12T15:00:58.5+02:00")
            .validate(),
        Ok(())
    );
}

#[test]
fn with_mime_type_sets_each_kinds_own() {
    assert_eq!(
        ContentBlock::image("TWFu", "image/png").with_mime_type("image/webp"),
        ContentBlock::image("TWFu", "image/webp")
    );
    assert_eq!(
        ContentBlock::resource_link("test://x", "x")
            .with_mime_type("text/csv")
            .media_type(),
        Some("text/csv")
    );
    assert_eq!(
        ContentBlock::text("x").with_mime_type("text/csv"),
        ContentBlock::text("x")
    );
}
