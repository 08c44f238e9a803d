use dsh_runtime::prompt;

#[derive(Debug)]
struct Oops;

/// Greet.
#[prompt]
async fn greet(name: String) -> Result<String, Oops> {
    Ok(name)
}

fn main() {}
