use dsh_runtime::tool;

struct NotAnError;

/// Fails oddly.
#[tool]
async fn odd() -> Result<u32, NotAnError> {
    Err(NotAnError)
}

fn main() {}
