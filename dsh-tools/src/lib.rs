//! The dsh-rs reference tools, written as ordinary `#[tool]` functions and usable from any
//! registry, and the `dsh-tools` host binary that serves them.
//!
//! - [`fs`]: `read`, `write`, `edit`;
//! - [`search`]: `grep`, `glob`;
//! - [`bash`]: `bash` (foreground with timeout and abort, or in the background as a job);
//! - [`jobs`]: `job_output`, `job_list`, `job_kill`, generic over job kinds, over the
//!   calling registry's job runtime;
//! - [`process`]: the job producer for an operating-system process that `bash` starts;
//! - [`scope`]: where the file tools resolve paths, and the `--root` confinement;
//! - [`host`]: every reference tool in one registry ([`host::register_tools`], [`host::Host`]),
//!   with its `--root` guard: the registry the `dsh-tools` binary serves.
//!
//! # Features
//!
//! - `cli` (default): the `dsh-tools` binary (`list`, `call`, `session`, `docs`, `export`,
//!   `sdk`, `code`, `mcp`, `replay`), with what only it needs: clap, code mode (`dsh-code`)
//!   and the MCP server (`dsh-mcp`). The library builds without it
//!   (`default-features = false`).
//!
//! Install the host with `cargo install --path dsh-tools`.

pub mod bash;
pub mod fs;
pub mod host;
pub mod jobs;
pub mod process;
pub mod scope;
pub mod search;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use dsh_runtime::{RegisterError, RegistrationHandle, Registry, Toolbox};

/// Registers `toolbox` in the registry's global layer, as the list of handles every
/// `register*` function of this crate returns (so [`host::register_tools`] joins them):
/// the one body of `fs::register_in`, `search::register_in` and `jobs::register`.
fn register_toolbox<T: Toolbox>(
    registry: &Registry,
    toolbox: T,
) -> Result<Vec<RegistrationHandle>, RegisterError> {
    Ok(vec![registry.register_toolbox(Arc::new(toolbox))?])
}

/// Locks `mutex`, taking the data of a poisoned lock as it is: every critical section of
/// this crate leaves its data whole (a collector's window, a cache, a directory handle),
/// so a panic elsewhere must not make the tools fail. One helper per crate: sharing it
/// across the workspace would make a std idiom public API of a published crate.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The command that regenerates the checked-in `dsh-tools/TOOLS.md` from the repository root.
pub const REGENERATE_CATALOG: &str = "cargo run -p dsh-tools -- docs --out dsh-tools/TOOLS.md";
