//! A plain `T` return, no return type, no parameters, `#[doc = ...]` forms.
use dsh_runtime::{Tool, tool};

#[doc = concat!("Add ", "two numbers.")]
#[tool]
async fn add(a: i32, b: i32) -> i64 {
    i64::from(a) + i64::from(b)
}

/// Do nothing.
#[tool]
async fn noop() {}

pub fn main() {
    let _ = (Add.definition(), Noop.definition(), NoopArgs {});
}
