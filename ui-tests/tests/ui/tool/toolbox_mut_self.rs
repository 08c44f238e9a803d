use dsh_runtime::{tool, toolbox};

struct Server;

#[toolbox]
impl Server {
    /// Greets.
    #[tool]
    async fn greet(&mut self, name: String) -> String {
        name
    }
}

fn main() {}
