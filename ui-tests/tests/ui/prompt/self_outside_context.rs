use dsh_runtime::prompt;

struct Coach;

impl Coach {
    /// Motivate.
    #[prompt]
    async fn motivate(self: std::sync::Arc<Self>) -> String {
        String::new()
    }
}

fn main() {}
