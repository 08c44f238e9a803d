//! `#[resource]` on free fns: what is published, what a read returns, and the errors.

use dsh_runtime::content::{Annotations, ResourceContents, Role};
use dsh_runtime::resources::{Json, Resource, ResourceError, Resources};
use dsh_runtime::{ToolSchema, resource};
use serde::{Deserialize, Serialize};

use super::block_on;

/// The static text.
///
/// Always the same.
#[resource(
    "test://static-text",
    title = "Static text",
    mime_type = "text/plain",
    size = 5,
    audience = ["user", "assistant"],
    priority = 0.25,
    last_modified = "2025-01-12T15:00:58Z"
)]
async fn static_text() -> &'static str {
    "hello"
}

/// One user's profile.
#[resource("users://{id}/profile", name = "profile")]
async fn user_profile(id: u64) -> String {
    format!("user {id}")
}

/// Raw bytes.
#[resource(uri = "test://bytes", mime_type = "application/octet-stream")]
async fn raw_bytes() -> Vec<u8> {
    vec![0, 1, 2, 0xff]
}

#[derive(Serialize)]
struct AppConfig {
    retries: u8,
}

/// The configuration.
#[resource("config://app")]
async fn config() -> Json<AppConfig> {
    Json(AppConfig { retries: 3 })
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, ToolSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum Shade {
    Light,
    Dark,
}

#[resource("themes://{shade}/{name}.css", mime_type = "text/css")]
async fn theme(shade: Shade, r#name: String) -> Result<String, ResourceError> {
    if name == "missing" {
        return Err(ResourceError::InvalidParams {
            placeholder: "name".into(),
            reason: "no such theme".into(),
        });
    }
    Ok(format!("/* {shade:?} {name} */"))
}

#[resource("fail://{what}")]
async fn failing(what: String) -> Result<String, std::io::Error> {
    Err(std::io::Error::other(format!("cannot read {what}")))
}

#[resource("panic://now")]
async fn panicking() -> String {
    panic!("the resource body panicked")
}

#[resource("multi://{n}", struct_name = "Several")]
async fn multi(n: u8) -> Vec<ResourceContents> {
    (0..n)
        .map(|i| ResourceContents::text(format!("multi://{n}#{i}"), i.to_string()))
        .collect()
}

#[test]
fn publishes_what_the_attribute_and_doc_comment_say() {
    let resources = Resources::new();
    let all: [Resource; 6] = [
        StaticText.into(),
        UserProfile.into(),
        RawBytes.into(),
        Config.into(),
        Theme.into(),
        Several.into(),
    ];
    for r in all {
        resources.register(r).unwrap().keep();
    }
    let list = resources.list();
    let names: Vec<&str> = list.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["static_text", "raw_bytes", "config"]);
    let text = &list[0];
    assert_eq!(text.uri, "test://static-text");
    assert_eq!(text.title.as_deref(), Some("Static text"));
    assert_eq!(
        text.description.as_deref(),
        Some("The static text.\n\nAlways the same.")
    );
    assert_eq!(text.mime_type.as_deref(), Some("text/plain"));
    assert_eq!(text.size, Some(5));
    assert_eq!(
        text.annotations,
        Some(
            Annotations::new()
                .with_audience([Role::User, Role::Assistant])
                .with_priority(0.25)
                .with_last_modified("2025-01-12T15:00:58Z")
        )
    );
    // `Json<T>` publishes its MIME type; no doc comment, no description.
    assert_eq!(list[2].mime_type.as_deref(), Some("application/json"));
    assert_eq!(list[1].description.as_deref(), Some("Raw bytes."));
    let templates = resources.templates();
    let uris: Vec<&str> = templates.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(
        uris,
        [
            "users://{id}/profile",
            "themes://{shade}/{name}.css",
            "multi://{n}"
        ]
    );
    assert_eq!(templates[0].name, "profile");
    assert_eq!(templates[1].description, None);
    assert_eq!(templates[1].mime_type.as_deref(), Some("text/css"));
}

#[test]
fn reads_text_bytes_json_and_contents() {
    block_on(async {
        let resources = Resources::new();
        let _h = resources
            .register_all([
                StaticText.into(),
                UserProfile.into(),
                RawBytes.into(),
                Config.into(),
                Several.into(),
            ])
            .unwrap();
        assert_eq!(
            resources.read("test://static-text").await.unwrap(),
            [ResourceContents::text("test://static-text", "hello").with_mime_type("text/plain")]
        );
        assert_eq!(
            resources.read("users://42/profile").await.unwrap(),
            [ResourceContents::text("users://42/profile", "user 42")]
        );
        assert_eq!(
            resources.read("test://bytes").await.unwrap(),
            [ResourceContents::blob("test://bytes", "AAEC/w==")
                .with_mime_type("application/octet-stream")]
        );
        assert_eq!(
            resources.read("config://app").await.unwrap(),
            [ResourceContents::text("config://app", r#"{"retries":3}"#)
                .with_mime_type("application/json")]
        );
        let several = resources.read("multi://2").await.unwrap();
        assert_eq!(
            several,
            [
                ResourceContents::text("multi://2#0", "0"),
                ResourceContents::text("multi://2#1", "1")
            ]
        );
    });
}

#[test]
fn a_placeholder_that_does_not_parse_is_invalid_params_naming_it() {
    block_on(async {
        let resources = Resources::new();
        let _h = resources
            .register_all([UserProfile.into(), Theme.into()])
            .unwrap();
        match resources.read("users://seven/profile").await {
            Err(ResourceError::InvalidParams {
                placeholder,
                reason,
            }) => {
                assert_eq!(placeholder, "id");
                assert!(reason.contains("\"seven\""), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        // An enum placeholder reads serde's names.
        assert_eq!(
            resources.read("themes://dark/solar.css").await.unwrap(),
            [
                ResourceContents::text("themes://dark/solar.css", "/* Dark solar */")
                    .with_mime_type("text/css")
            ]
        );
        match resources.read("themes://Dark/solar.css").await {
            Err(ResourceError::InvalidParams {
                placeholder,
                reason,
            }) => {
                assert_eq!(placeholder, "shade");
                assert!(reason.contains("unknown variant `Dark`"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        // A `ResourceError` of the body is kept as it is.
        assert_eq!(
            resources.read("themes://light/missing.css").await,
            Err(ResourceError::InvalidParams {
                placeholder: "name".into(),
                reason: "no such theme".into()
            })
        );
    });
}

#[test]
fn errors_and_panics_of_the_body_are_failures() {
    block_on(async {
        let resources = Resources::new();
        let _h = resources
            .register_all([Failing.into(), Panicking.into()])
            .unwrap();
        assert_eq!(
            resources.read("fail://disk").await,
            Err(ResourceError::Failed("cannot read disk".into()))
        );
        match resources.read("panic://now").await {
            Err(ResourceError::Failed(why)) => {
                assert!(why.contains("panicked"), "{why}");
                assert!(why.contains("the resource body panicked"), "{why}");
            }
            other => panic!("{other:?}"),
        }
        // The collection still works after the panic.
        assert!(resources.read("fail://x").await.is_err());
    });
}

#[test]
fn the_fn_stays_callable() {
    block_on(async {
        assert_eq!(user_profile(3).await, "user 3");
        assert_eq!(static_text().await, "hello");
    });
}

/// A resource larger than the collection's cap is an error naming the cap; the
/// collection keeps serving the others.
#[test]
fn contents_over_the_cap_are_refused() {
    use dsh_runtime::content::ResourceContents;
    use dsh_runtime::resources::{Resource, ResourceError, Resources};

    crate::block_on(async {
        let resources = Resources::new().with_max_bytes(10);
        resources
            .register(Resource::fixed("big://one", "big", |uri, _| async move {
                Ok(vec![ResourceContents::text(uri, "x".repeat(11))])
            }))
            .unwrap()
            .keep();
        resources
            .register(Resource::fixed(
                "small://one",
                "small",
                |uri, _| async move { Ok(vec![ResourceContents::text(uri, "x".repeat(10))]) },
            ))
            .unwrap()
            .keep();
        assert_eq!(
            resources.read("big://one").await,
            Err(ResourceError::TooLarge {
                uri: "big://one".into(),
                limit: 10
            })
        );
        assert_eq!(resources.read("small://one").await.unwrap().len(), 1);
    });
}
