use dsh_runtime::resource;

/// The README.
#[resource("docs://readme")]
fn readme() -> String {
    String::new()
}

fn main() {}
