//! An argument is read from text (`FromStr`, or serde from a string), for `Option<T>`
//! its `T`: a type read neither way is an error at the type.
use dsh_runtime::prompt;

struct Settings {
    verbose: bool,
}

/// Explain.
#[prompt]
async fn explain(settings: Settings, extra: Option<Vec<String>>) -> String {
    format!("{} {extra:?}", settings.verbose)
}

fn main() {}
