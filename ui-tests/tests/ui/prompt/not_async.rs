use dsh_runtime::prompt;

/// Greet.
#[prompt]
fn greet(name: String) -> String {
    name
}

fn main() {}
