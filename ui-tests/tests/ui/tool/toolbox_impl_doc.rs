use dsh_runtime::{tool, toolbox};

struct Server;

/// Greets people. (Written on the impl block: no tool's description.)
#[toolbox]
impl Server {
    #[tool]
    async fn greet(&self, name: String) -> String {
        name
    }
}

#[toolbox]
/// Also on the impl block, after the attribute.
impl Server2 {
    /// Greets.
    #[tool]
    async fn hello(&self, name: String) -> String {
        name
    }
}

struct Server2;

fn main() {}
