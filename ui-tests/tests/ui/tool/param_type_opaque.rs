//! A parameter type from another crate without `Deserialize` or `ToolSchema` (it cannot
//! derive them): one error at the type, naming no internal path, saying what to use.
use dsh_runtime::{tool, toolbox};

/// Wait until a moment.
#[tool]
async fn wait_until(at: std::time::Instant) -> u64 {
    at.elapsed().as_secs()
}

/// Hold anything.
#[tool]
async fn hold(value: Box<dyn std::any::Any + Send>) -> bool {
    value.is::<u32>()
}

pub struct Clock;

#[toolbox]
impl Clock {
    /// Wait until a moment.
    #[tool]
    pub async fn wait(&self, at: std::time::Instant) -> u64 {
        at.elapsed().as_secs()
    }
}

fn main() {}
