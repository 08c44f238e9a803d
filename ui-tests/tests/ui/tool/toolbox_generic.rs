use dsh_runtime::{tool, toolbox};

struct Server<T>(T);

#[toolbox]
impl<T: Send + Sync + 'static> Server<T> {
    /// Greets.
    #[tool]
    async fn greet(&self, name: String) -> String {
        name
    }
}

fn main() {}
