//! # Argument structs
//!
//! What this teaches: arguments described by your own types. A struct or enum deriving
//! `serde::Deserialize` and `ToolSchema` gets a JSON schema of exactly what serde accepts:
//! the derive reads `#[serde(...)]` (here `rename_all`, `default` and an internally tagged
//! enum) and `#[schema(...)]` adds what serde cannot say (ranges, lengths). `#[tool(args)]`
//! makes one struct the whole arguments object. A call that breaks the rules fails with
//! `INVALID_ARGS` and a message naming the path of every violation, before the body runs.
//!
//! Run it with `cargo run -p examples --bin argument_structs`.
//!
//! Read first: `first_tool`. Read next: `toolbox` (tools sharing state).

use dsh_runtime::{Registry, Tool, ToolCall, ToolSchema, tool};
use serde::{Deserialize, Serialize};

/// Where to look.
///
/// As in serde, `rename_all` on an enum renames the variants (the tag values `file` and
/// `glob`), not the variants' fields: `max_files` stays snake_case.
#[derive(Deserialize, ToolSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Source {
    /// One file of the project.
    File {
        /// Path relative to the project root.
        #[schema(length(min = 1, max = 200))]
        path: String,
    },
    /// Every file whose name matches a glob.
    Glob {
        /// A glob such as `src/**/*.rs`.
        pattern: String,
        /// Look in at most this many files.
        #[schema(range(min = 1, max = 50))]
        max_files: Option<u32>,
    },
}

/// The arguments of `find_text`, one struct instead of a parameter list.
#[derive(Deserialize, ToolSchema)]
#[serde(rename_all = "camelCase")]
struct Query {
    /// The text to find.
    #[schema(length(min = 1))]
    needle: String,
    /// Where to look.
    source: Source,
    /// Match case exactly (default false).
    #[serde(default)]
    case_sensitive: bool,
    /// Stop after this many matches.
    #[serde(default = "default_limit")]
    #[schema(range(min = 1, max = 100))]
    max_matches: u32,
}

fn default_limit() -> u32 {
    10
}

/// What `find_text` found (the output schema is derived too).
#[derive(Serialize, ToolSchema)]
struct Found {
    /// The query as the body understood it.
    query: String,
    /// How many matches at most were asked for.
    limit: u32,
}

/// Find a piece of text in the project's files (a stand-in: it reports what it would do).
#[tool(args, read_only)]
async fn find_text(args: Query) -> Found {
    let Query {
        needle,
        source,
        case_sensitive,
        max_matches,
    } = args;
    let place = match source {
        Source::File { path } => format!("file {path}"),
        Source::Glob { pattern, max_files } => {
            format!("glob {pattern} (max {} files)", max_files.unwrap_or(50))
        }
    };
    let case = if case_sensitive {
        "exact case"
    } else {
        "any case"
    };
    Found {
        query: format!("{needle:?} in {place}, {case}"),
        limit: max_matches,
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("== the parameter schema");
    println!("{}", Query::schema().to_json_string());
    println!("== the output schema");
    println!("{}", FindText.definition().output.to_json_string());

    let registry = Registry::new();
    let _find = registry.register(FindText)?;

    println!("== valid calls (serde defaults fill what is omitted)");
    let valid = [
        r#"{"needle":"fn main","source":{"kind":"file","path":"src/main.rs"}}"#,
        r#"{"needle":"TODO","source":{"kind":"glob","pattern":"**/*.rs","max_files":5},"caseSensitive":true,"maxMatches":3}"#,
    ];
    for args in valid {
        let r = registry
            .execute(ToolCall::new("ok", "find_text", args))
            .await;
        match r.value() {
            Some(value) => println!("value: {value}"),
            None => println!("unexpected failure: {}", r.message().unwrap_or("-")),
        }
    }

    println!("== invalid calls (INVALID_ARGS, every violation with its path)");
    let invalid = [
        // a range, a length and a nested range at once
        r#"{"needle":"","source":{"kind":"glob","pattern":"*","max_files":0},"maxMatches":500}"#,
        // the tag picks no variant
        r#"{"needle":"x","source":{"kind":"url","path":"https://example.com"}}"#,
        // the tag picks a variant whose field is missing
        r#"{"needle":"x","source":{"kind":"file"}}"#,
        // a wrong type
        r#"{"needle":"x","source":{"kind":"file","path":"a"},"caseSensitive":"yes"}"#,
    ];
    for args in invalid {
        let r = registry
            .execute(ToolCall::new("bad", "find_text", args))
            .await;
        println!(
            "code={} message={}",
            r.code_str().unwrap_or("-"),
            r.message().unwrap_or("-")
        );
    }
    Ok(())
}
