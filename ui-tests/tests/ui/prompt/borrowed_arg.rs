use dsh_runtime::prompt;

/// Greet.
#[prompt]
async fn greet(name: &'static str) -> String {
    name.to_string()
}

fn main() {}
