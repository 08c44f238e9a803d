use dsh_runtime::resource;

struct Docs;

impl Docs {
    /// The README.
    #[resource("docs://readme")]
    async fn readme(&self) -> String {
        String::new()
    }
}

fn main() {}
