use dsh_runtime::{tool, toolbox};

struct Server;

trait Greeter {
    async fn greet(&self, name: String) -> String;
}

#[toolbox]
impl Greeter for Server {
    /// Greets.
    #[tool]
    async fn greet(&self, name: String) -> String {
        name
    }
}

fn main() {}
