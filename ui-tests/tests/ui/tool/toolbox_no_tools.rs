use dsh_runtime::toolbox;

struct Server;

#[toolbox]
impl Server {
    /// Forgot `#[tool]`.
    async fn greet(&self, name: String) -> String {
        name
    }
}

fn main() {}
