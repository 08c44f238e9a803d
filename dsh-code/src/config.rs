//! The limits of a run.

use std::fmt;
use std::time::Duration;

/// How `run_code` runs programs. Every limit applies to one run.
///
/// ```
/// # use std::time::Duration;
/// let config = dsh_code::CodeConfig::default()
///     .deadline(Duration::from_secs(30))
///     .max_parallel_sub_calls(4);
/// assert_eq!(config.max_parallel(), 4);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeConfig {
    pub(crate) deadline: Duration,
    pub(crate) memory_limit: usize,
    pub(crate) stack_limit: usize,
    pub(crate) max_output_bytes: usize,
    pub(crate) max_parallel: usize,
}

impl Default for CodeConfig {
    fn default() -> Self {
        CodeConfig {
            deadline: Duration::from_secs(60),
            memory_limit: 64 << 20,
            stack_limit: 1 << 20,
            max_output_bytes: 256 << 10,
            max_parallel: 10,
        }
    }
}

impl CodeConfig {
    /// The wall-clock budget of a run, from its start to its settlement, awaiting tools
    /// included (default 60 s). A program still running then is interrupted (even
    /// inside a loop or a regular expression) and the run fails with kind `timeout`;
    /// its in-flight tool calls are cancelled and awaited.
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// The most memory the engine may allocate (default 64 MiB). Captured logs are
    /// held outside it and capped by [`CodeConfig::max_output_bytes`].
    pub fn memory_limit(mut self, bytes: usize) -> Self {
        self.memory_limit = bytes;
        self
    }

    /// The most native stack the engine may use (default 1 MiB): deeper recursion
    /// throws a `RangeError` the program can catch. The engine's thread gets this plus
    /// a fixed margin.
    pub fn stack_limit(mut self, bytes: usize) -> Self {
        self.stack_limit = bytes;
        self
    }

    /// The most bytes of program output, captured logs and the result's JSON together
    /// (default 256 KiB). A program printing more is stopped, and the run fails with
    /// kind `output-limit`.
    pub fn max_output_bytes(mut self, bytes: usize) -> Self {
        self.max_output_bytes = bytes;
        self
    }

    /// How many parallel-safe tool calls of one run may overlap (default 10; `0` counts
    /// as 1).
    pub fn max_parallel_sub_calls(mut self, n: usize) -> Self {
        self.max_parallel = n;
        self
    }

    /// The effective overlap cap (at least 1).
    pub fn max_parallel(&self) -> usize {
        self.max_parallel.max(1)
    }

    /// The run's wall-clock budget.
    pub fn run_deadline(&self) -> Duration {
        self.deadline
    }
}

/// How a scope presents its tools to the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    /// Every visible tool is offered for direct calls; no `run_code` (the default).
    #[default]
    Native,
    /// Only `run_code` is offered; every other visible tool is reached from a program,
    /// and a direct call to one fails with `UNKNOWN_TOOL`.
    Code,
    /// The visible tools and `run_code`, both callable directly.
    Both,
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Native => "native",
            Mode::Code => "code",
            Mode::Both => "both",
        })
    }
}
