use dsh_runtime::tool;

struct Server;

impl Server {
    /// Greets.
    #[tool]
    async fn greet(&self, name: String) -> String {
        name
    }
}

fn main() {}
