//! placeholder
//!
//! Stands in until the real module lands; registers nothing.

use dsh_runtime::jobs::JobRuntime;
use dsh_runtime::{RegisterError, Registration, Registry};

/// Register this module's tools (none yet) in `registry`, using `jobs` for background work.
pub fn register(
    registry: &Registry,
    jobs: &JobRuntime,
) -> Result<Vec<Registration>, RegisterError> {
    let _ = (registry, jobs);
    Ok(Vec::new())
}
