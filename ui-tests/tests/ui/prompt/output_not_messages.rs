use dsh_runtime::prompt;

/// Count.
#[prompt]
async fn count() -> u32 {
    3
}

fn main() {}
