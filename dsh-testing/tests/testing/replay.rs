//! Replaying a recorded log against the current registry: the diff names the one record
//! whose outcome changed, and says how.

use dsh_runtime::{Registry, ToolError, tool};
use dsh_testing::{Outcome, replay_log};

/// Greet someone (the current version: it adds an exclamation mark).
#[tool]
async fn greet(name: String) -> Result<String, ToolError> {
    if name.is_empty() {
        return Err(ToolError::with_code("EMPTY_NAME", "the name is empty"));
    }
    Ok(format!("Hello, {name}!"))
}

/// Recorded with an earlier `greet` (no exclamation mark) on line 2, and a `shout` tool
/// that no longer exists.
const LOG: &str = r#"{"call":{"id":"c1","name":"greet","arguments":{"name":""}},"result":{"content":[{"type":"text","text":"Error: the name is empty"}],"isError":true}}
{"call":{"id":"c2","name":"greet","arguments":"{\"name\":\"Ada\"}"},"result":{"content":[{"type":"text","text":"Hello, Ada"}],"isError":false}}

{"call":{"id":"c3","name":"greet","arguments":{"name":"Bo"}},"result":{"content":[{"type":"text","text":"Hello, Bo!"}],"isError":false}}
{"call":{"id":"c4","name":"greet","arguments":{"name":7}},"result":{"content":[{"type":"text","text":"Hello, 7!"}],"isError":false}}
{"call":{"id":"c5","name":"shout","arguments":{}}}
{"call":{"id":"c6","name":"greet","arguments":{"name":"Cy"}}}
not json
"#;

#[test]
fn a_changed_record_is_reported_with_its_fields() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let registry = Registry::new();
        let _greet = registry.register(Greet).expect("greet");
        let diff = replay_log(&registry, None, LOG).await;
        let outcomes: Vec<(usize, &str, &Outcome)> = diff
            .records
            .iter()
            .map(|r| (r.line, r.id.as_str(), &r.outcome))
            .collect();
        assert_eq!(outcomes.len(), 6);
        assert_eq!(outcomes[0], (1, "c1", &Outcome::Same));
        assert!(matches!(outcomes[1], (2, "c2", Outcome::Changed(c)) if c.len() == 1 && c[0].field == "content"));
        assert_eq!(outcomes[2], (4, "c3", &Outcome::Same));
        assert!(matches!(outcomes[3], (5, "c4", Outcome::NowFailing(c)) if c.iter().map(|c| c.field).collect::<Vec<_>>() == ["isError", "content"]));
        assert_eq!(outcomes[4], (6, "c5", &Outcome::UnknownTool));
        assert_eq!(outcomes[5], (7, "c6", &Outcome::NotLogged));
        assert_eq!(diff.malformed.len(), 1);
        assert_eq!(diff.malformed[0].0, 8);
        assert!(!diff.is_empty());
        assert_eq!(
            diff.to_string().lines().take(7).collect::<Vec<_>>(),
            [
                r#"line 2 (call "c2", tool "greet"): changed"#,
                r#"  content: logged "Hello, Ada""#,
                r#"  content: now    "Hello, Ada!""#,
                r#"line 5 (call "c4", tool "greet"): now failing"#,
                r#"  isError: logged false"#,
                r#"  isError: now    true"#,
                r#"  content: logged "Hello, 7!""#,
            ]
        );
        // The unchanged part of the log replays clean.
        let clean: String = LOG.lines().take(1).chain(LOG.lines().skip(3).take(1)).map(|l| format!("{l}\n")).collect();
        let diff = replay_log(&registry, None, &clean).await;
        assert!(diff.is_empty(), "{diff}");
        assert_eq!(diff.to_string(), "no differences in 2 records");
    });
}
