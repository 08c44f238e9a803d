//! A prompt takes `name`, `title`, `description`, `struct_name` and `crate`: a resource's
//! key, or a misspelt one, is an error listing them.
use dsh_runtime::prompt;

/// Greet.
#[prompt(tilte = "Greeting", mime_type = "text/plain")]
async fn greet(name: String) -> String {
    name
}

fn main() {}
