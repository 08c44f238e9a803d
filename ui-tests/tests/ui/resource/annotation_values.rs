//! The annotations are checked at compile time: who (`user`, `assistant`), a priority
//! from 0 to 1, an RFC 3339 date-time; and the MIME type's form.
use dsh_runtime::resource;

/// The README.
#[resource(
    "docs://readme",
    audience = "users",
    priority = 1.5,
    last_modified = "2025-01-12 15:00",
    mime_type = "markdown"
)]
async fn readme() -> String {
    String::new()
}

/// The changelog.
#[resource("docs://changelog", audience = ["user", "user"])]
async fn changelog() -> String {
    String::new()
}

fn main() {}
