use dsh_runtime::resource;

/// The README.
#[resource("docs://readme", mime = "text/markdown", uri = "docs://other")]
async fn readme() -> String {
    String::new()
}

fn main() {}
