use dsh_runtime::resource;

/// The README.
#[resource(mime_type = "text/markdown")]
async fn readme() -> String {
    String::new()
}

fn main() {}
